// One head's lines view on a canvas, drawn from viz.lines_data's payload (LinesData.data):
// queries left, keys right, a line per weight drawn, wider and more opaque for heavier weights
// as in viz.lines_view. Streamlit calls this function again whenever the payload or the theme
// changes, on the same elements: what it sets up once lives on the root element. Tokens and
// hover texts are set as text (textContent), never as markup.

const MARGIN = { left: 10, right: 10, bottom: 10 }; // px, as the Plotly lines view
const X_RANGE = [-0.6, 1.6]; // the Plotly view's x axis: lines run from x = 0 to x = 1
const TITLE_PX = 70; // the Plotly view's top margin, where its title was

export default function linesView({ data, parentElement }) {
  const root = parentElement.querySelector(".lv-root");
  if (!root || !data) return undefined;
  const state = root.__lines || (root.__lines = setUp(root));
  const packed = `${data.query}|${data.key}|${data.weight}`;
  if (state.packed !== packed) {
    state.lines = unpack(data);
    state.packed = packed;
  }
  state.data = data;
  textSizes(root, "lv", data);
  state.title.textContent = data.title;
  draw(state);
  return () => state.observer.disconnect();
}

function setUp(root) {
  const state = {
    title: root.querySelector(".lv-title"),
    stage: root.querySelector(".lv-stage"),
    canvas: root.querySelector(".lv-canvas"),
    labels: root.querySelector(".lv-labels"),
    tip: root.querySelector(".lv-tip"),
    width: 0,
    drawn: 0,
  };
  hoverOn(state, hover);
  redrawOnResize(state, state.stage, draw);
  return state;
}

function bytesOf(text) {
  return base64Bytes(text).buffer;
}

function unpack(data) {
  return {
    query: new Uint16Array(bytesOf(data.query)),
    key: new Uint16Array(bytesOf(data.key)),
    weight: new Float32Array(bytesOf(data.weight)),
  };
}

// Where things go at the stage's width: x of a line's two ends, y of each column's rows.
function geometry(state) {
  const { data } = state;
  const width = state.stage.clientWidth;
  const height = Math.max(40, data.height - TITLE_PX);
  const plotW = width - MARGIN.left - MARGIN.right;
  const x = (v) => MARGIN.left + ((v - X_RANGE[0]) / (X_RANGE[1] - X_RANGE[0])) * plotW;
  const span = Math.max(data.queries.length, data.keys.length);
  const middle = (height - MARGIN.bottom) / 2;
  const rowY = (r) => middle + (r - (span - 1) / 2) * data.row_px;
  // a shorter column spreads its tokens over the longer one's rows (viz.lines.column_rows)
  const column = (n) => Array.from({ length: n }, (_, i) =>
    rowY(n > 1 ? (i * (span - 1)) / (n - 1) : 0));
  return { width, height, x, left: x(0), right: x(1), qy: column(data.queries.length),
           ky: column(data.keys.length) };
}

function draw(state) {
  const g = (state.geom = geometry(state));
  const { canvas, data, lines } = state;
  const ctx = sizedCanvas(canvas, g.width, g.height);
  ctx.strokeStyle = data.colour;
  ctx.lineCap = "butt";
  const widest = Math.max(1, 0.8 * data.row_px); // lines never merge into bars
  let low = -Infinity;
  data.levels.forEach((high, n) => { // a bin at a time, the heaviest drawn last, on top
    ctx.beginPath();
    for (let i = 0; i < data.count; i++) {
      const w = lines.weight[i];
      if (w < low || w >= high) continue;
      ctx.moveTo(g.left, g.qy[lines.query[i]]);
      ctx.lineTo(g.right, g.ky[lines.key[i]]);
    }
    ctx.lineWidth = Math.min(1 + 1.2 * n, widest);
    ctx.globalAlpha = Math.min(1, 0.2 + 0.2 * n);
    ctx.stroke();
    low = high;
  });
  ctx.globalAlpha = 1;
  tokenLabels(state, g);
  state.width = g.width;
  canvas.dataset.drawn = String(++state.drawn); // tests and the bench watch this
}

// Each column's tokens; on a long input every `every`-th, with its position.
function tokenLabels(state, g) {
  const { data } = state;
  const gap = g.x(data.label_gap) - g.x(0);
  const spans = [];
  const column = (tokens, ys, cls, x) => tokens.forEach((token, i) => {
    if (i % data.every !== 0) return;
    const at = positionOf(data, cls === "lv-query" ? "queries" : "keys", i);
    spans.push(labelAt(data.every === 1 && at === i ? token : `${at} · ${token}`, cls, x, ys[i]));
  });
  column(data.queries, g.qy, "lv-query", g.left - gap);
  column(data.keys, g.ky, "lv-key", g.right + gap);
  state.labels.replaceChildren(...spans);
}

// Row i's position: i itself, or where the columns hold a chosen few (a range of queries and
// the keys they weigh), the position the payload gives.
function positionOf(data, side, i) {
  const at = data[side === "queries" ? "query_at" : "key_at"];
  return at ? at[i] : i;
}

function named(data, side, i) {
  const shown = data[side][i], raw = data[`${side}_raw`][i];
  return `${positionOf(data, side, i)} · ${shown}` + (raw === null ? "" : ` (token ${raw})`);
}

// The line nearest the pointer within a few px, or the token of the column under it.
function hover(state, event) {
  const g = state.geom, { tip, data, lines } = state;
  if (!g) return;
  const box = state.canvas.getBoundingClientRect();
  const px = event.clientX - box.left, py = event.clientY - box.top;
  let text = null;
  if (px < g.left || px > g.right) {
    const side = px < g.left ? "queries" : "keys", ys = px < g.left ? g.qy : g.ky;
    let best = -1;
    ys.forEach((y, i) => { if (best < 0 || Math.abs(y - py) < Math.abs(ys[best] - py)) best = i; });
    if (best >= 0 && Math.abs(ys[best] - py) <= Math.max(6, data.row_px / 2))
      text = `position ${named(data, side, best)}`;
  } else {
    let best = -1, bestD = Infinity;
    const t = (px - g.left) / (g.right - g.left);
    for (let i = 0; i < data.count; i++) { // the lines' heights at the pointer's x
      const y = g.qy[lines.query[i]] + t * (g.ky[lines.key[i]] - g.qy[lines.query[i]]);
      const d = Math.abs(y - py);
      if (d < bestD) { bestD = d; best = i; }
    }
    if (best >= 0 && bestD <= 5) {
      const w = lines.weight[best];
      text = `query ${named(data, "queries", lines.query[best])}\n`
        + `→ key ${named(data, "keys", lines.key[best])}\nweight ${w.toPrecision(4)}`;
    }
  }
  if (text === null) { tip.hidden = true; return; }
  showTip(tip, text, px + 14, py + 14, g.width);
}
