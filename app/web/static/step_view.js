// Decode's step-through, drawn in the browser from viz.steps_data's payload of every step: the
// step moves here at once (◀ / ▶, the slider, its arrow keys) and is then told to the server
// (setStateValue "step"), whose fragment redraws what depends on it more slowly (the table,
// the beam tree, the URL). Streamlit calls this function again whenever the payload or the
// theme changes, on the same elements: what is set up once lives on the root element.
// The step shown is this page's own unless the server moved it (`moved` changed: a new run, a
// click in the beam tree, a link), so a rerun for an older step never pulls the slider back.
// Every label and hover text is set as text (textContent), never as markup.

const CROWDED = 0.9; // key labels wider than this share of the room between two turn sideways

export default function steps({ data, parentElement, setStateValue }) {
  const root = parentElement.querySelector(".ds-root");
  if (!root || !data || !data.steps || data.steps.length === 0) return undefined;
  const state = root.__steps || (root.__steps = setUp(root));
  // each report a new value (Streamlit drops one equal to the last sent: after a click in the
  // tree moved the server to step 1, a step back to the 2 last sent never reached it)
  state.send = (step) => setStateValue("step", { step, sent: Date.now() });
  if (state.moved !== data.moved) {
    state.moved = data.moved;
    state.step = data.step;
  }
  state.data = data;
  state.step = Math.min(Math.max(0, state.step), data.steps.length - 1);
  show(state);
  return () => {
    state.observer.disconnect();
    document.removeEventListener("scroll", state.hideTip, true);
  };
}

function setUp(root) {
  const $ = (cls) => root.querySelector(cls);
  const state = {
    root, step: 0, moved: undefined, drawn: 0, width: 0,
    prev: $(".ds-prev"), next: $(".ds-next"), slider: $(".ds-slider"), at: $(".ds-at"),
    tokens: $(".ds-tokens"), note: $(".ds-note"), views: $(".ds-views"),
    candTitle: $(".ds-cands .ds-title"), bars: $(".ds-bars"),
    attTitle: $(".ds-att .ds-title"), panels: $(".ds-panels"), tip: $(".ds-tip"),
  };
  const go = (step, tell) => {
    const last = state.data.steps.length - 1;
    const to = Math.min(Math.max(0, step), last);
    if (to !== state.step) { state.step = to; show(state); }
    if (tell) state.send(to);
  };
  state.prev.addEventListener("click", () => go(state.step - 1, true));
  state.next.addEventListener("click", () => go(state.step + 1, true));
  state.slider.addEventListener("input", () => go(Number(state.slider.value), false));
  state.slider.addEventListener("change", () => go(Number(state.slider.value), true));
  root.addEventListener("mouseover", (e) => hover(state, e));
  root.addEventListener("mouseleave", () => { state.tip.hidden = true; });
  // the page scrolled under a still mouse: what the box named is no longer under it
  state.hideTip = () => { state.tip.hidden = true; };
  document.addEventListener("scroll", state.hideTip, true);
  state.observer = new ResizeObserver(() => {
    if (state.data && state.views.clientWidth !== state.width) show(state);
  });
  state.observer.observe(state.views);
  return state;
}

function show(state) {
  const { data, root } = state;
  const n = data.steps.length, entry = data.steps[state.step];
  state.tip.hidden = true; // what it named may be gone
  textSizes(root, "ds", data);
  root.classList.toggle("ds-stacked", Boolean(data.stacked));
  state.slider.max = String(n - 1);
  state.slider.value = String(state.step);
  state.slider.disabled = n < 2;
  state.slider.setAttribute("aria-valuetext", `step ${state.step}, of steps 0 to ${n - 1}`);
  state.at.textContent = n < 2 ? "one step only" : `${state.step} of 0–${n - 1}`;  // n steps
  state.prev.disabled = state.step === 0;
  state.next.disabled = state.step === n - 1;
  if (!entry) { // a long run's steps come a window at a time: this one is on its way
    state.tokens.textContent = `Step ${state.step}: on its way from the server…`;
    state.note.hidden = state.views.hidden = true;
  } else {
    state.tokens.textContent = `Tokens so far, on ${data.whose}: ${entry.tokens}`;
    state.note.textContent = entry.note;
    state.note.hidden = !entry.note;
    state.views.hidden = !entry.candidates;
  }
  if (entry && entry.candidates) {
    candidates(state, entry.candidates, data.colours);
    attention(state, entry.attention, data.colours);
  }
  state.width = state.views.clientWidth;
  root.dataset.step = String(state.step);
  root.dataset.drawn = String(++state.drawn); // tests and the bench watch this
}

// The candidates as horizontal bars on a 0..1 scale, each with its probability beside it.
function candidates(state, shown, colours) {
  state.candTitle.textContent = shown.title;
  const rows = shown.labels.map((label, i) => {
    const name = span("ds-cand-label", label);
    const track = document.createElement("div");
    track.className = "ds-track";
    const fill = document.createElement("div");
    fill.className = "ds-fill";
    fill.style.width = `${Math.max(0, Math.min(1, shown.probs[i])) * 100}%`;
    fill.style.background = shown.taken[i] ? colours.taken : colours.candidate;
    track.append(fill);
    const value = span("ds-value", shown.shown[i]);
    track.dataset.tip = `rank ${label}\nprobability ${shown.probs[i].toFixed(5)}`;
    return [name, track, value];
  });
  state.bars.replaceChildren(...rows.flat());
}

// Each panel: the weight the new position gave every key (or, under the norm measure, αᵢⱼ‖f(xⱼ)‖:
// shown.axis names it), as columns on a scale from 0 to the panel's top (1, or a round number
// just above its largest value: viz/decode_step.scale_top),
// the keys labelled below (every k-th when there are many, as the Plotly figure's axis).
function attention(state, shown, colours) {
  state.attTitle.textContent = shown.title;
  state.panels.replaceChildren(...shown.panels.map((panel) => {
    const box = document.createElement("div");
    box.className = "ds-panel";
    const plot = document.createElement("div");
    plot.className = "ds-plot";
    // minmax(0, 1fr): columns of one width whatever their labels need (1fr alone grows a
    // column to its widest label, and the labels' grid would no longer match the bars')
    plot.style.gridTemplateColumns = `repeat(${panel.weights.length}, minmax(0, 1fr))`;
    // past ~100 keys the 2 px between columns would take all the width (500 keys: 998 px) and
    // leave every bar none: columns touch there
    if (panel.weights.length > TOUCHING) plot.style.columnGap = "0px";
    const top = panel.top > 0 ? panel.top : 1;
    plot.append(...panel.weights.map((w, i) => {
      const cell = document.createElement("div");
      cell.className = "ds-col";
      cell.dataset.tip = `key ${panel.keys[i]}\n${shown.axis || "weight"} ${weight(w)}`;
      const bar = document.createElement("div");
      bar.className = "ds-bar";
      bar.style.height = `${Math.max(0, Math.min(1, w / top)) * 100}%`;
      bar.style.background = colours.weight;
      cell.append(bar);
      return cell;
    }));
    const scale = document.createElement("div");
    scale.className = "ds-scale";
    scale.append(...[[String(top), 0], [String(top / 2), 50], ["0", 100]].map(([text, at]) => {
      const tick = span("", text);
      tick.style.top = `${at}%`;
      return tick;
    }));
    const frame = document.createElement("div");
    frame.className = "ds-frame";
    frame.append(scale, plot);
    const keys = document.createElement("div");
    keys.className = "ds-keys";
    const n = panel.weights.length;
    keys.dataset.columns = String(n);
    keys.dataset.every = String(panel.tick_at.length > 1 ? panel.tick_at[1] - panel.tick_at[0] : 1);
    keys.append(...panel.tick_at.map((at, j) => {
      const label = span("ds-key", panel.ticks[j]);
      label.style.left = `${((at + 0.5) / n) * 100}%`; // under its column's middle
      return label;
    }));
    const keyRow = document.createElement("div");
    keyRow.className = "ds-key-row";
    keyRow.append(document.createElement("div"), keys);
    box.append(span("ds-panel-title", panel.title), frame, keyRow);
    return box;
  }));
  for (const keys of state.panels.querySelectorAll(".ds-keys")) sideways(keys);
}

const TOUCHING = 100; // keys past which a panel's columns have no gap between them

// A weight as the tip shows it: four decimals, or four figures where it is smaller than that.
function weight(w) {
  return w >= 0.001 || w === 0 ? w.toFixed(4) : w.toPrecision(4);
}

// Key labels wider than the room between two of them turn to -60°, each ending under its
// column's middle, the row as tall as the longest needs.
function sideways(keys) {
  const labels = Array.from(keys.children);
  if (labels.length === 0) return;
  const room = (keys.clientWidth / Number(keys.dataset.columns)) * Number(keys.dataset.every);
  const widest = Math.max(...labels.map((l) => l.offsetWidth));
  const line = labels[0].offsetHeight, pad = 3;
  const turn = widest > room * CROWDED;
  keys.classList.toggle("ds-turned", turn);
  const angle = Math.PI / 3;
  const below = turn ? widest * Math.sin(angle) + (line / 2) * Math.cos(angle) + line / 2 : line;
  keys.style.height = `${Math.ceil(pad + below + 2)}px`;
  for (const label of labels) label.style.top = `${pad}px`;
}

function span(cls, text) {
  const s = document.createElement("span");
  if (cls) s.className = cls;
  s.textContent = text;
  return s;
}

function hover(state, event) {
  const target = event.target.closest && event.target.closest("[data-tip]");
  const { tip, root } = state;
  if (!target || !root.contains(target)) { tip.hidden = true; return; }
  const box = root.getBoundingClientRect(), at = target.getBoundingClientRect();
  const x = at.left - box.left + at.width / 2 + 8, y = at.top - box.top + 8;
  showTip(tip, target.dataset.tip, x, y, box.width);
}
