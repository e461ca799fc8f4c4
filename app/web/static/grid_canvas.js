// Every head as thumbnails on one canvas, drawn from viz.head_grid's payload (HeadGrid.data):
// one byte a cell, base64. Streamlit calls this function again whenever the payload or the
// theme changes, on the same elements: what it sets up once lives on the root element, and the
// cells are decoded again only when they changed (another head picked changes `selected` only).
// Every label and hover text is set as text (textContent), never as markup.

const MAX_PITCH = 150; // px per head at most, as the Plotly model view
const GAP = 0.08; // share of a head's pitch left blank between thumbnails
const OUTLINE = "crimson";
const GROUP_FRAME = "rgba(128, 128, 128, 0.9)"; // grey: reads on a light and a dark theme

export default function headGrid({ data, parentElement, setTriggerValue }) {
  const root = parentElement.querySelector(".hg-root");
  if (!root || !data) return undefined;
  const state = root.__headGrid || (root.__headGrid = setUp(root));
  state.pick = (layer, head) => setTriggerValue("picked", { layer, head });
  state.given = data;
  state.measure = data.measure;
  show(state);
  return () => state.observer.disconnect();
}

// The payload in the measure asked for: its own, or the other one it carries ("other": a long
// input's head view switches the measure without sending this grid again).
function show(state) {
  const { given } = state;
  const other = given.other && given.other.measure === state.measure ? given.other : null;
  const data = other ? { ...given, ...other } : given;
  if (state.cellsText !== data.cells) {
    // each measure's cells decoded once: switching back and forth decodes nothing again
    const kept = state.images && state.images.get(data.cells);
    state.image = kept || cellImage(data);
    state.images = new Map([[state.cellsText, state.images?.get(state.cellsText) ?? state.image],
                            [data.cells, state.image]]);
    state.bytes = state.image.bytes;
    state.cellsText = data.cells;
  }
  state.data = data;
  texts(state);
  draw(state);
}

function setUp(root) {
  const state = {
    root,
    title: root.querySelector(".hg-title"),
    note: root.querySelector(".hg-note"),
    legend: root.querySelector(".hg-legend"),
    stage: root.querySelector(".hg-stage"),
    canvas: root.querySelector(".hg-canvas"),
    labels: root.querySelector(".hg-labels"),
    tip: root.querySelector(".hg-tip"),
    width: 0,
    drawn: 0,
  };
  hoverOn(state, hover);
  state.canvas.addEventListener("click", (e) => {
    const at = locate(state, e);
    if (at) state.pick(at.layer, at.head);
  });
  redrawOnResize(state, state.stage, draw);
  // a long input's head view (head_zoom.js) says which head it shows: outline it here, as
  // another head picked there does not send this grid again. A zoom says the same head again:
  // nothing to redraw (at 16 × 32 heads the redraw held the zoomed window's first paint)
  // It says its measure too: the grid shows the same one where its payload carries it.
  window.addEventListener("attnlens-head", (e) => {
    const { kind, selected, measure } = e.detail || {};
    if (!state.data || !state.root.isConnected || kind !== state.data.kind) return;
    const known = measure === state.given.measure || measure === state.given.other?.measure;
    const switched = known && measure !== state.measure;
    if (String(selected) === String(state.data.selected) && !switched) return;
    state.given = { ...state.given, selected };
    if (!switched) { show(state); return; }
    // another measure: redrawn after the head view has painted (512 thumbnails decoded and
    // drawn in the same task held its first paint back)
    state.measure = measure;
    requestAnimationFrame(() => setTimeout(() => show(state), 0));
  });
  return state;
}

// The cells at one pixel each, thumbnails packed side by side: (H·k) × (L·q), coloured.
function cellImage(data) {
  const [L, H, q, k] = data.shape;
  const bytes = base64Bytes(data.cells);
  const lut = colourTable(data.colors);
  const canvas = document.createElement("canvas");
  canvas.width = H * k;
  canvas.height = L * q;
  const ctx = canvas.getContext("2d");
  const image = ctx.createImageData(canvas.width, canvas.height);
  const px = new Uint32Array(image.data.buffer);
  let i = 0;
  for (let l = 0; l < L; l++)
    for (let h = 0; h < H; h++)
      for (let r = 0; r < q; r++) {
        const row = (l * q + r) * canvas.width + h * k;
        for (let c = 0; c < k; c++) px[row + c] = lut[bytes[i++]];
      }
  ctx.putImageData(image, 0, 0);
  return { canvas, bytes };
}

// 256 colours as RGBA words: byte 0 transparent, 1..255 interpolated between the stops.
function colourTable(stops) {
  const table = new Uint32Array(256);
  const word = new Uint8Array(table.buffer);
  for (let b = 1; b < 256; b++) {
    let j = 1;
    while (j < stops.length - 1 && stops[j][0] < b) j++;
    const [b0, ...c0] = stops[j - 1], [b1, ...c1] = stops[j];
    const t = Math.min(1, Math.max(0, (b - b0) / (b1 - b0)));
    for (let ch = 0; ch < 3; ch++) word[b * 4 + ch] = Math.round(c0[ch] + t * (c1[ch] - c0[ch]));
    word[b * 4 + 3] = 255;
  }
  return table;
}

function texts(state) {
  const { data } = state;
  textSizes(state.root, "hg", data);
  state.title.textContent = data.title;
  state.note.textContent = data.note;
  state.note.hidden = !data.note;
  legend(state);
}

function legend(state) {
  const { data, legend: box } = state;
  const last = data.levels + 1;
  const at = (byte) => `${((byte - 1) / (last - 1)) * 100}%`;
  colourBar(box.querySelector(".hg-bar"), box.querySelector(".hg-ticks"), data.colors,
            data.ticks, at);
}

// Where thumbnails go at the stage's width: pitch per head, a square cell, gaps between; under
// grouped-query attention a wider gap between the groups of query heads sharing a key head.
function geometry(state) {
  const [L, H, q, k] = state.data.shape;
  const text = state.data.text_px;
  const group = state.data.kv_group || 0; // query heads per key head; 0: no groups
  const groups = group ? Math.ceil(H / group) : 0;
  const left = Math.round(text * 4.2); // "layer 11"
  const top = Math.round(text * (group ? 3.4 : 1.8)); // "kv 0: q 0–3" over "head 11"
  const width = state.stage.clientWidth;
  const most = MAX_PITCH * Math.max(1, text / 12); // larger on a projector, as its text
  const groupGap = group ? Math.max(6, Math.round(text * 0.8)) : 0;
  const edge = group ? Math.ceil(groupGap / 2) + 1 : 0; // the last frame's room, right and below
  const room = width - left - Math.max(0, groups - 1) * groupGap - edge;
  const pitch = Math.max(4, Math.min(most, room / H));
  const gap = Math.max(2, Math.round(pitch * GAP));
  const cell = (pitch - gap) / k;
  const tileH = cell * q;
  const headX = (h) => left + h * pitch + (group ? Math.floor(h / group) * groupGap : 0);
  return { L, H, q, k, left, top, width, pitch, gap, cell, group, groups, groupGap, headX,
           pad: Math.min((gap + groupGap) / 3, edge), tileW: pitch - gap, tileH,
           pitchY: tileH + gap, height: top + L * (tileH + gap) + edge };
}

function draw(state) {
  const g = (state.geom = geometry(state));
  thinTicks(state.root.querySelector(".hg-ticks"));
  const { canvas } = state;
  const ctx = sizedCanvas(canvas, g.width, g.height);
  ctx.imageSmoothingEnabled = false;
  const source = state.image.canvas;
  for (let l = 0; l < g.L; l++)
    for (let h = 0; h < g.H; h++)
      ctx.drawImage(source, h * g.k, l * g.q, g.k, g.q,
                    g.headX(h), g.top + l * g.pitchY, g.tileW, g.tileH);
  if (g.group) groupFrames(ctx, g);
  const chosen = state.data.selected;
  if (chosen) {
    const [l, h] = chosen, half = g.gap / 2;
    ctx.strokeStyle = OUTLINE;
    ctx.lineWidth = Math.max(2, Math.min(3, half));
    ctx.strokeRect(g.headX(h) - half / 2, g.top + l * g.pitchY - half / 2,
                   g.tileW + half, g.tileH + half);
  }
  axisLabels(state, g);
  state.width = g.width;
  const { left, top, pitch, pitchY, tileW, tileH, cell, group, groupGap } = g;
  canvas.dataset.geometry = JSON.stringify({ left, top, pitch, pitchY, tileW, tileH, cell,
                                             group, groupGap });
  canvas.dataset.drawn = String(++state.drawn); // tests and the bench watch this
}

// A frame round each group of query heads that read one key/value head, over every layer.
function groupFrames(ctx, g) {
  const { pad } = g;
  ctx.strokeStyle = GROUP_FRAME;
  ctx.lineWidth = 1;
  for (let n = 0; n < g.groups; n++) {
    const first = n * g.group, last = Math.min(g.H, first + g.group) - 1;
    const x0 = g.headX(first) - pad, x1 = g.headX(last) + g.tileW + pad;
    const y0 = g.top - pad, y1 = g.top + g.L * g.pitchY - g.gap + pad;
    ctx.strokeRect(Math.round(x0) + 0.5, Math.round(y0) + 0.5, Math.round(x1 - x0),
                   Math.round(y1 - y0));
  }
}

// "kv n: q a–b" over each group: the key/value head and the query heads that share it.
function groupName(g, n) {
  const first = n * g.group, last = Math.min(g.H, first + g.group) - 1;
  return `kv ${n}: q ${first}–${last}`;
}

function axisLabels(state, g) {
  const words = g.pitch >= state.data.text_px * 4.5; // room for "head 11" over each column
  const headY = g.group ? Math.round(state.data.text_px * 1.6) : 0;
  const heads = Array.from({ length: g.H }, (_, h) =>
    labelAt(words ? `head ${h}` : String(h), "hg-head", g.headX(h) + g.tileW / 2, headY));
  const layers = Array.from({ length: g.L }, (_, l) =>
    labelAt(`layer ${l}`, "hg-layer", 0, g.top + l * g.pitchY + g.tileH / 2));
  const groups = Array.from({ length: g.groups }, (_, n) => {
    const first = n * g.group, last = Math.min(g.H, first + g.group) - 1;
    const middle = (g.headX(first) + g.headX(last) + g.tileW) / 2;
    return labelAt(groupName(g, n), "hg-head hg-group", middle, 0);
  });
  state.labels.replaceChildren(...groups, ...heads, ...layers);
}

// The thumbnail and cell under the pointer (its gap counts as its own), or null.
function locate(state, event) {
  const g = state.geom;
  if (!g) return null;
  const box = state.canvas.getBoundingClientRect();
  const x = event.clientX - box.left - g.left, y = event.clientY - box.top - g.top;
  if (x < 0 || y < 0) return null;
  let head = Math.floor(x / g.pitch);
  let inX = x - head * g.pitch;
  if (g.group) { // a group's heads side by side, then the gap between groups (no head)
    const span = g.group * g.pitch + g.groupGap;
    const n = Math.floor(x / span), within = x - n * span;
    if (within >= g.group * g.pitch) return null;
    head = n * g.group + Math.floor(within / g.pitch);
    inX = within - Math.floor(within / g.pitch) * g.pitch;
  }
  const layer = Math.floor(y / g.pitchY);
  if (head >= g.H || layer >= g.L) return null;
  const inY = y - layer * g.pitchY;
  const inside = inX < g.tileW && inY < g.tileH;
  const col = Math.min(g.k - 1, Math.floor(inX / g.cell));
  const row = Math.min(g.q - 1, Math.floor(inY / g.cell));
  return { layer, head, row: inside ? row : null, col: inside ? col : null, x, y };
}

function hover(state, event) {
  const at = locate(state, event);
  const { tip } = state;
  state.canvas.style.cursor = at ? "pointer" : "default";
  if (!at) { tip.hidden = true; return; }
  const g0 = state.geom;
  const shared = g0.group ? ` (reads kv head ${Math.floor(at.head / g0.group)})` : "";
  const lines = [`layer ${at.layer} · head ${at.head}${shared}: click to enlarge`];
  if (at.row !== null) lines.push(...cellLines(state, at));
  const g = state.geom;
  showTip(tip, lines.join("\n"), g.left + at.x + 14, g.top + at.y + 14, g.width);
}

function cellLines(state, at) {
  const { data, bytes } = state;
  const [, H, q, k] = data.shape;
  const byte = bytes[((at.layer * H + at.head) * q + at.row) * k + at.col];
  const span = (edges, labels, i, one, many) => {
    const a = edges[i], b = edges[i + 1] - 1;
    return a === b ? `${one} ${labels[a]}` : `${many} ${a}–${b}`;
  };
  const rows = span(data.row_edges, data.query_labels, at.row, "query", "queries");
  const cols = span(data.col_edges, data.key_labels, at.col, "key", "keys");
  const pooled = data.cell_name || (data.note ? "mean share" : "weight");
  if (byte === 0) return [rows, cols, "masked: no weight here"];
  const share = Math.pow((byte - 1) / data.levels, data.power);
  const shown = share < 0.01 ? share.toPrecision(1) : share.toFixed(2);
  return [rows, cols, `${pooled} ≈ ${shown}`];
}

// A colour bar's tick labels that would touch the one before are hidden (the last one kept,
// the one before it hidden instead): at a phone's width 0, 0.001 and 0.01 ran into one another.
function thinTicks(ticks) {
  const spans = [...ticks.children];
  spans.forEach((s) => { s.style.visibility = ""; });
  let right = -Infinity;
  const shown = [];
  for (const span of spans) {
    const box = span.getBoundingClientRect();
    if (box.width === 0) return; // not laid out (hidden): left as they are
    if (box.left >= right + 4) { shown.push(span); right = box.right; }
    else span.style.visibility = "hidden";
  }
  const last = spans[spans.length - 1];
  if (last && last.style.visibility === "hidden") {
    last.style.visibility = "";
    const before = shown[shown.length - 1];
    if (before && before !== spans[0]) before.style.visibility = "hidden";
  }
}
