// One head of a long input, drawn on a canvas from viz.HeadWindow.data(): its pooled overview,
// or the exact cells of a zoomed window. A box dragged on the cells asks the server for that
// window ("zoom": {rows: [r0, r1], cols: [c0, c1]}, positions, stop excluded); "Whole head" or
// a double click asks for the whole head again ("zoom": {reset: true}). Values come as base64
// of little-endian float16 (pooled) or float32 (exact); NaN is a masked block, drawn grey.
// Every label and hover text is set as text (textContent), never as markup.

const MASKED = [128, 128, 128, 96]; // grey, part see-through: lighter or darker with the theme
const MIN_DRAG = 4; // px: a smaller drag is a click, not a box
const MAX_PLOT = 760; // px: the plot's side at most (the old heatmap's height)
const MIN_PLOT = 240; // px: the plot's side at least, however short the window
const FRAME = 200; // px of the window left for the title, the caption and the colour bar
const BAND = "#ff7f0e"; // the sliding window's edges (ORANGE of viz/shared/palette.py)
const SINK = "#d62728"; // the outline of a sink's key column (RED of viz/shared/palette.py)
const LEVELS = 1024; // steps of the colour table (colourTable)

export default function headZoom({ data, parentElement, setTriggerValue }) {
  const root = parentElement.querySelector(".hz-root");
  if (!root || !data) return undefined;
  const state = root.__headZoom || (root.__headZoom = setUp(root));
  state.send = (value) => setTriggerValue("zoom", value);
  if (state.valuesText !== data.values || state.scale !== data.scale) {
    state.values = decode(data.values, data.dtype);
    state.valuesText = data.values;
    state.scale = data.scale;
    state.image = cellImage(data, state.values);
  }
  state.data = data;
  texts(state);
  draw(state);
  if (data.selected) { // the every-head grid outlines this head (grid_canvas.js)
    const detail = { kind: data.kind, selected: data.selected, measure: data.measure };
    window.dispatchEvent(new CustomEvent("attnlens-head", { detail }));
  }
  return () => state.observer.disconnect();
}

function setUp(root) {
  const state = {
    root,
    title: root.querySelector(".hz-title"),
    caption: root.querySelector(".hz-caption"),
    reset: root.querySelector(".hz-reset"),
    legend: root.querySelector(".hz-legend"),
    stage: root.querySelector(".hz-stage"),
    canvas: root.querySelector(".hz-canvas"),
    labels: root.querySelector(".hz-labels"),
    box: root.querySelector(".hz-box"),
    tip: root.querySelector(".hz-tip"),
    width: 0,
    drawn: 0,
    drag: null,
  };
  const { canvas } = state;
  canvas.addEventListener("mousedown", (e) => startDrag(state, e));
  window.addEventListener("mousemove", (e) => moveDrag(state, e));
  window.addEventListener("mouseup", (e) => endDrag(state, e));
  hoverOn(state, hover);
  canvas.addEventListener("dblclick", () => state.send({ reset: true }));
  state.reset.addEventListener("click", () => state.send({ reset: true }));
  redrawOnResize(state, state.stage, draw);
  return state;
}

function decode(text, dtype) {
  const bytes = base64Bytes(text);
  if (dtype === "f4") return new Float32Array(bytes.buffer);
  const halves = new Uint16Array(bytes.buffer);
  const out = new Float32Array(halves.length);
  for (let i = 0; i < halves.length; i++) out[i] = half(halves[i]);
  return out;
}

// IEEE 754 half precision to a number (a browser without Float16Array).
function half(h) {
  const sign = h & 0x8000 ? -1 : 1, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

function colourOf(data, value) {
  if (Number.isNaN(value)) return MASKED;
  const t = Math.min(1, Math.max(0, value)) ** (1 / data.power);
  const stops = data.colors;
  let j = 1;
  while (j < stops.length - 1 && stops[j][0] < t) j++;
  const [p0, ...c0] = stops[j - 1], [p1, ...c1] = stops[j];
  const u = Math.min(1, Math.max(0, (t - p0) / (p1 - p0)));
  return [...c0.map((c, i) => Math.round(c + u * (c1[i] - c))), 255];
}

// The colour of t = weight^(1/power) at LEVELS + 1 even steps of t, RGBA: a cell's colour is
// looked up, each channel within 1 of colourOf's own (which allocates arrays for every cell:
// 15-70 ms for a zoomed window of 192 × 192, 1-2 ms looked up).
function colourTable(data) {
  const table = new Uint8ClampedArray((LEVELS + 1) * 4);
  for (let i = 0; i <= LEVELS; i++) table.set(colourOf(data, (i / LEVELS) ** data.power), i * 4);
  return table;
}

// One pixel a block: B_k × B_q, coloured.
function cellImage(data, values) {
  const [rows, cols] = data.shape;
  const canvas = document.createElement("canvas");
  canvas.width = cols;
  canvas.height = rows;
  const ctx = canvas.getContext("2d");
  const image = ctx.createImageData(cols, rows);
  const px = image.data, table = colourTable(data), root = 1 / data.power;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (Number.isNaN(value)) {
      px.set(MASKED, i * 4);
      continue;
    }
    const at = Math.round(Math.min(1, Math.max(0, value)) ** root * LEVELS) * 4;
    px[i * 4] = table[at];
    px[i * 4 + 1] = table[at + 1];
    px[i * 4 + 2] = table[at + 2];
    px[i * 4 + 3] = table[at + 3];
  }
  ctx.putImageData(image, 0, 0);
  return canvas;
}

function texts(state) {
  const { data } = state;
  textSizes(state.root, "hz", data);
  state.title.textContent = data.title;
  state.caption.textContent = data.marks_caption
    ? `${data.caption}\n${data.marks_caption}` : data.caption;
  state.reset.disabled = data.whole;
  state.legend.querySelector(".hz-bar-title").textContent = data.bar_title;
  colourBar(state.legend.querySelector(".hz-bar"), state.legend.querySelector(".hz-ticks"),
            data.colors, data.ticks, (p) => `${p * 100}%`);
}

// Room for the labels: token labels when the window is exact, position numbers otherwise.
// Cells stay square: the longer side of the window takes the plot's side.
function geometry(state) {
  const { data } = state;
  const [rows, cols] = data.shape;
  const text = data.text_px;
  const labelled = data.query_labels.length > 0;
  const left = Math.round(text * (labelled ? 11 : 4));
  const bottom = Math.round(text * (labelled ? 9 : 3));
  const width = state.stage.clientWidth;
  const fits = Math.max(MIN_PLOT, window.innerHeight - FRAME); // the whole plot in view
  const side = Math.max(MIN_PLOT, Math.min(MAX_PLOT, fits, width - left - 10));
  const cell = side / Math.max(rows, cols);
  const w = cell * cols, h = cell * rows;
  return { rows, cols, left, top: 4, w, h, cellW: cell, cellH: cell, width,
           height: 4 + h + bottom, text };
}

function draw(state) {
  const g = (state.geom = geometry(state));
  thinTicks(state.root.querySelector(".hz-ticks"));
  const { canvas } = state;
  const ctx = sizedCanvas(canvas, g.width, g.height);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(state.image, g.left, g.top, g.w, g.h);
  const marks = drawMarks(state, ctx, g);
  axisLabels(state, g);
  state.width = g.width;
  canvas.dataset.geometry = JSON.stringify({ left: g.left, top: g.top, w: g.w, h: g.h });
  canvas.dataset.window = JSON.stringify({ rows: state.data.rows, cols: state.data.cols });
  canvas.dataset.marks = JSON.stringify(marks);
  canvas.dataset.drawn = String(++state.drawn); // tests and the bench watch this
}

// A position's offset in px along one axis: blocks are drawn the same size though the last
// may hold fewer positions, so the block is found first, then the place within it.
function along(edges, cell, p) {
  let b = 0;
  while (b < edges.length - 2 && edges[b + 1] <= p) b++;
  const width = edges[b + 1] - edges[b];
  return (b + Math.min(1, Math.max(0, (p - edges[b]) / width))) * cell;
}

// The sliding window's two edges (data.band: [key, query, key, query] at cell centres) and a
// sink's first key column, clipped to the cells; what was drawn, for tests.
function drawMarks(state, ctx, g) {
  const { data } = state;
  const band = data.band || [];
  const x = (j) => g.left + along(data.col_edges, g.cellW, j + 0.5);
  const y = (i) => g.top + along(data.row_edges, g.cellH, i + 0.5);
  ctx.save();
  ctx.beginPath();
  ctx.rect(g.left, g.top, g.w, g.h);
  ctx.clip();
  const thick = Math.max(1, g.text / 12); // wider with a projector's text
  ctx.strokeStyle = BAND;
  ctx.lineWidth = 1.5 * thick;
  ctx.setLineDash([6 * thick, 4 * thick]);
  for (const [j0, i0, j1, i1] of band) {
    // through every row edge between, so a shorter last block bends the line with its cells
    ctx.beginPath();
    ctx.moveTo(x(j0), y(i0));
    for (const e of data.row_edges) if (e > i0 && e < i1) ctx.lineTo(x(j0 + e - i0), y(e));
    ctx.lineTo(x(j1), y(i1));
    ctx.stroke();
  }
  ctx.setLineDash([]);
  if (data.sink) {
    ctx.strokeStyle = SINK;
    ctx.lineWidth = 2 * thick;
    ctx.strokeRect(g.left + 1, g.top + 1, Math.max(2, g.cellW - 2), g.h - 2);
  }
  ctx.restore();
  return { band: band.length, window: data.window ?? null, sink: !!data.sink };
}

// Every n-th label, n the fewest cells that leave a line of text between two labels.
function axisLabels(state, g) {
  const { data } = state;
  const spans = [];
  const put = (text, cls, x, y) => spans.push(labelAt(text, cls, x, y));
  const exact = data.query_labels.length > 0;
  const rowStep = Math.max(1, Math.ceil((g.text * 1.3) / g.cellH));
  const colStep = Math.max(1, Math.ceil((g.text * (exact ? 1.3 : 4)) / g.cellW));
  for (let r = 0; r < g.rows; r += rowStep) {
    const text = exact ? data.query_labels[r] : String(data.row_edges[r]);
    put(text, "hz-row", g.left - 4, g.top + (r + 0.5) * g.cellH);
  }
  for (let c = 0; c < g.cols; c += colStep) {
    const text = exact ? data.key_labels[c] : String(data.col_edges[c]);
    put(text, exact ? "hz-col hz-turned" : "hz-col", g.left + (c + 0.5) * g.cellW, g.top + g.h + 4);
  }
  state.labels.replaceChildren(...spans);
}

// The block under a point of the canvas, or null outside the cells.
function locate(state, clientX, clientY) {
  const g = state.geom;
  if (!g) return null;
  const rect = state.canvas.getBoundingClientRect();
  const x = clientX - rect.left - g.left, y = clientY - rect.top - g.top;
  const col = Math.floor(x / g.cellW), row = Math.floor(y / g.cellH);
  const inside = x >= 0 && y >= 0 && col < g.cols && row < g.rows;
  return { row: Math.min(g.rows - 1, Math.max(0, row)), col: Math.min(g.cols - 1, Math.max(0, col)),
           x, y, inside };
}

function startDrag(state, event) {
  const at = locate(state, event.clientX, event.clientY);
  if (!at || !at.inside || event.button !== 0) return;
  event.preventDefault();
  state.drag = { from: at, x: event.clientX, y: event.clientY };
}

function moveDrag(state, event) {
  const { drag, box, geom: g } = state;
  if (!drag) return;
  const to = locate(state, event.clientX, event.clientY);
  const x0 = Math.min(drag.from.x, to.x), x1 = Math.max(drag.from.x, to.x);
  const y0 = Math.min(drag.from.y, to.y), y1 = Math.max(drag.from.y, to.y);
  box.hidden = false;
  box.style.left = `${g.left + Math.max(0, x0)}px`;
  box.style.top = `${g.top + Math.max(0, y0)}px`;
  box.style.width = `${Math.min(g.w, x1) - Math.max(0, x0)}px`;
  box.style.height = `${Math.min(g.h, y1) - Math.max(0, y0)}px`;
}

function endDrag(state, event) {
  const { drag } = state;
  if (!drag) return;
  state.drag = null;
  state.box.hidden = true;
  if (Math.abs(event.clientX - drag.x) < MIN_DRAG || Math.abs(event.clientY - drag.y) < MIN_DRAG)
    return;
  const to = locate(state, event.clientX, event.clientY);
  state.send(windowOf(state.data, drag.from, to));
}

// The positions a box from one block to another covers, each side's stop excluded.
function windowOf(data, a, b) {
  const r0 = Math.min(a.row, b.row), r1 = Math.max(a.row, b.row);
  const c0 = Math.min(a.col, b.col), c1 = Math.max(a.col, b.col);
  return {
    rows: [data.row_edges[r0], data.row_edges[r1 + 1]],
    cols: [data.col_edges[c0], data.col_edges[c1 + 1]],
  };
}

// A cell's value as the tip gives it: a weight to data.digits decimals; a norm, whose unit is
// the model's own (a small GPT-2's are ~1e-5: every cell read 0.0000), to four figures where
// it is smaller than 0.001, as Decode's step rows give it.
function shownValue(value, data) {
  const shown = value * (data.unit || 1);
  const small = data.measure === "norm" && shown !== 0 && Math.abs(shown) < 0.001;
  return small ? shown.toPrecision(4) : shown.toFixed(data.digits);
}

function hover(state, event) {
  const at = locate(state, event.clientX, event.clientY);
  const { tip, data } = state;
  if (!at || !at.inside || state.drag) { tip.hidden = true; return; }
  const value = state.values[at.row * data.shape[1] + at.col];
  const span = (edges, labels, i, one, many) => {
    const a = edges[i], b = edges[i + 1] - 1;
    return labels.length ? `${one} ${labels[i]}` : a === b ? `${one} ${a}` : `${many} ${a}–${b}`;
  };
  const lines = [
    span(data.row_edges, data.query_labels, at.row, "query", "queries"),
    span(data.col_edges, data.key_labels, at.col, "key", "keys"),
  ];
  // the value itself: the norm measure is sent as a share of its largest (data.unit)
  const quantity = data.quantity || "weight";
  const what = data.pooling ? `${data.pooling} ${quantity}` : quantity;
  lines.push(Number.isNaN(value) ? "masked: not allowed" : `${what} ${shownValue(value, data)}`);
  const g = state.geom;
  showTip(tip, lines.join("\n"), g.left + at.x + 14, g.top + at.y + 14, g.width);
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
