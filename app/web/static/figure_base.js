// What the figures the page draws itself share (app/web/components.py puts this before each
// figure's own script): bytes out of base64, a canvas sized for the screen's pixels, a redraw
// when the stage changes width, labels placed by hand and the hover box kept inside the stage.
// Every text is set as text (textContent), never as markup.

// The bytes of a base64 payload.
function base64Bytes(text) {
  const raw = atob(text);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

// The canvas at width × height CSS px, its pixels at the screen's ratio, and its 2D context
// drawing in CSS px.
function sizedCanvas(canvas, width, height) {
  const dpr = window.devicePixelRatio || 1;
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

// draw(state) again whenever the stage takes another width than the one drawn (state.width).
function redrawOnResize(state, stage, draw) {
  state.observer = new ResizeObserver(() => {
    if (state.data && stage.clientWidth !== state.width) draw(state);
  });
  state.observer.observe(stage);
}

// A span of class `cls` holding `text`, its left and top at (x, y) px.
function labelAt(text, cls, x, y) {
  const span = document.createElement("span");
  span.className = cls;
  span.textContent = text;
  span.style.left = `${x}px`;
  span.style.top = `${y}px`;
  return span;
}

// The hover box showing `text` at (left, top) px, moved left where it would pass `width`.
function showTip(tip, text, left, top, width) {
  tip.textContent = text;
  tip.hidden = false;
  tip.style.left = `${Math.min(left, Math.max(0, width - tip.offsetWidth))}px`;
  tip.style.top = `${top}px`;
}

// hover(state, event) as the pointer moves over state.canvas; the hover box hidden as it leaves.
function hoverOn(state, hover) {
  state.canvas.addEventListener("mousemove", (e) => hover(state, e));
  state.canvas.addEventListener("mouseleave", () => { state.tip.hidden = true; });
}

// A colour bar: its stops ([position, r, g, b], each position placed by `at` as a CSS length)
// as the bar's gradient, and its ticks ([position, text]) as labels below it.
function colourBar(bar, ticksBox, colors, ticks, at) {
  const stops = colors.map(([p, r, g, b]) => `rgb(${r},${g},${b}) ${at(p)}`);
  bar.style.background = `linear-gradient(to right, ${stops.join(",")})`;
  ticksBox.replaceChildren(...ticks.map(([p, text]) => {
    const tick = document.createElement("span");
    tick.textContent = text;
    tick.style.left = at(p);
    return tick;
  }));
}

// The figure's text and title sizes (data.text_px, data.title_px: a projector's are larger) as
// the CSS variables its style reads, --PREFIX-text-px and --PREFIX-title-px.
function textSizes(root, prefix, data) {
  root.style.setProperty(`--${prefix}-text-px`, `${data.text_px}px`);
  root.style.setProperty(`--${prefix}-title-px`, `${data.title_px}px`);
}
