const RETRY_MS = %RETRY_MS%, PHONE_BELOW = %PHONE_BELOW_PX%;
const BASE = new URL("../../", location.href).href;
const ROUTE = BASE + "%FOLLOW_PATH%/", SLIDE = BASE + "%SLIDE_PATH%/";
const ANSWER = BASE + "%ANSWER_PATH%/";
let code = null, me = null, nick = "", present = false, known = null, shown = -2;
let payload = null, loading = false, running = false, holding = null, rendered = false;
let askedAt = 0, theme = null, plotly = null, drawnFor = null;
const mine = {};  // question id -> this student's choice (null: none), as the server said
const $ = (id) => document.getElementById(id);
function send(type, more) {
  window.parent.postMessage(Object.assign({isStreamlitMessage: true, type: type}, more || {}), "*");
}
function pause(ms) { return new Promise((done) => setTimeout(done, ms)); }
function screen() {  // the slide asked for: a projector's, a phone's (laid out again) or a screen's
  if (present) return "&present=1";
  return window.innerWidth < PHONE_BELOW ? "&size=phone" : "";
}
function rerun(why) {  // the page itself says what became of the class or the student
  if (Date.now() - askedAt < RETRY_MS) return;
  askedAt = Date.now();
  send("streamlit:setComponentValue", {value: [why, askedAt], dataType: "json"});
}
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function status(text) { $("lec_status").hidden = !text; $("lec_status").textContent = text || ""; }
function loadPlotly() {
  if (!plotly) plotly = new Promise((done, failed) => {
    const s = document.createElement("script");
    s.src = "%PLOTLY_FILE%"; s.onload = () => done(window.Plotly); s.onerror = failed;
    document.head.appendChild(s);
  });
  return plotly;
}
async function plot(box, fig) {
  if (!fig) { box.replaceChildren(); return; }
  const Plotly = await loadPlotly();
  await document.fonts.ready;  // Plotly measures its labels: in the app's font, once it is here
  const layout = Object.assign({}, fig.layout || {}, {autosize: true});
  delete layout.width;
  const fg = getComputedStyle(document.documentElement).getPropertyValue("--fg").trim();
  const family = getComputedStyle(document.body).fontFamily;
  layout.font = Object.assign({}, layout.font || {}, {color: fg, family: family});
  const faint = {gridcolor: "rgba(250,250,250,.15)", zerolinecolor: "rgba(250,250,250,.3)"};
  for (const k of Object.keys(layout)) {  // labels kept whole on a phone's narrow figure
    if (!/^[xy]axis[0-9]*$/.test(k)) continue;
    layout[k] = Object.assign({automargin: true}, theme === "dark" ? faint : {}, layout[k]);
  }
  await Plotly.react(box, fig.data || [], layout, {displayModeBar: false, responsive: true});
}
function result(q) {
  const box = el("div");
  const right = q.options[q.answer], chose = mine[q.id];
  let said;
  if (chose === null || chose === undefined) said = el("div", "alert info", "The answer: " + right);
  else if (chose === q.answer) said = el("div", "alert ok", "Right: " + right);
  else said = el("div", "alert no",
    "Not quite: the answer is " + right + " (you chose " + q.options[chose] + ")");
  said.id = "lec_result";
  box.appendChild(said);
  const why = el("p");
  why.appendChild(el("b", "", "Why: "));
  why.appendChild(document.createTextNode(q.why));
  box.appendChild(why);
  return box;
}
function drawQuestion() {
  const box = $("lec_ask"), q = payload && payload.question;
  box.replaceChildren();
  if (!q) return;
  if (q.none) { box.appendChild(el("p", "small", q.none)); return; }
  box.appendChild(el("h3", "", "Your answer"));
  box.appendChild(el("p", "", q.prompt));
  const options = el("div", "options"); options.id = "lec_options";
  q.options.forEach((text, i) => {
    const chosen = mine[q.id] === i;
    const b = el("button", chosen ? "chosen" : "", (chosen ? "✓ " : "") + text);
    b.disabled = q.revealed;
    b.onclick = () => answer(q.id, i);
    options.appendChild(b);
  });
  box.appendChild(options);
  if (!q.revealed) {
    const waiting = mine[q.id] !== null && mine[q.id] !== undefined;
    const hint = waiting ? "Waiting for the teacher to reveal." : "Tap an answer.";
    box.appendChild(el("p", "small", hint));
    return;
  }
  box.appendChild(result(q));
  const h = el("div"); h.id = "lec_histogram"; box.appendChild(h);
  plot(h, payload.histogram);
}
async function draw(p) {
  payload = p;
  $("lec_title").textContent = p.header.title;
  $("lec_counter").textContent = p.header.number + " / " + p.header.count;
  $("lec_caption").textContent = p.header.caption + " · class " + code + " · you are " + nick;
  const q = p.question;
  drawQuestion();
  if (q && q.id && !(q.id in mine)) {
    mine_of(q.id).then(() => { if (payload === p) drawQuestion(); });
  }
  const notes = $("lec_notes"); notes.replaceChildren();
  if (p.problem) notes.appendChild(el("div", "alert info", p.problem));
  for (const n of p.notes) notes.appendChild(el("p", "small", n));
  $("lec_words").innerHTML = p.words;  // Markdown the server rendered, raw HTML off
  for (const a of $("lec_words").querySelectorAll("a")) { a.target = "_blank"; a.rel = "noopener"; }
  $("lec_explore").href = new URL(p.explore, BASE).href;
  $("slide").hidden = false;
  shown = p.version;
  drawnFor = screen();
  status("");
  await plot($("lec_figure"), p.figure);
}
async function mine_of(qid) {
  try {
    const r = await fetch(ANSWER + code + "?me=" + me + "&question=" + qid, {cache: "no-store"});
    if (r.ok && !(qid in mine)) mine[qid] = (await r.json()).chosen;
  } catch (e) {}
}
async function answer(qid, i) {
  try {
    const r = await fetch(ANSWER + code, {method: "POST", cache: "no-store",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify({me: me, question: qid, choice: i})});
    const said = await r.json();
    if (r.ok) { mine[qid] = said.chosen; status(""); drawQuestion(); return; }
    status(said.error || "Your answer was not taken.");
    if (r.status === 403 || r.status === 404) rerun("gone");
  } catch (e) { status("The class cannot be reached just now: tap again in a moment."); }
}
async function load() {  // the payload of the newest version known, until it is drawn
  if (loading) return;
  loading = true;
  try {
    while (code && known !== null && known > shown) {
      const query = "?v=" + known + screen();
      let r = null;
      try { r = await fetch(SLIDE + code + query, {cache: "no-store"}); } catch (e) {}
      if (r && r.ok) {
        const p = await r.json();
        if (p.version >= known || p.version > shown) await draw(p);
        if (p.version < known) await pause(100);
      } else {
        if (r && r.status === 404) rerun("unread");
        else if (r) status(((await r.json().catch(() => ({}))).error || "") + " (trying again)");
        await pause(RETRY_MS * (1 + Math.random()));
      }
    }
  } finally { loading = false; }
}
async function follow() {
  running = true;
  while (code && !document.hidden) {
    holding = new AbortController();
    try {
      const after = known === null ? shown : known;
      const query = "?after=" + after + (me ? "&me=" + me : "") + "&slide=1" + screen();
      const reply = await fetch(ROUTE + code + query, {cache: "no-store", signal: holding.signal});
      if (reply.status === 404) { rerun("unread"); await pause(RETRY_MS); }
      else if (reply.ok) {
        const got = await reply.json();  // the new slide itself, or only its version
        known = Math.max(known === null ? -2 : known, got.version);
        if (got.header && got.version > shown) draw(got);
        else load();
      }
      else await pause(RETRY_MS * (1 + Math.random()));
    } catch (e) {  // the server restarts, or the tab was hidden: try again in a while
      if (!document.hidden) await pause(RETRY_MS * (0.5 + Math.random()));
    }
  }
  running = false;
}
function start() { if (!running && code && !document.hidden) follow(); }
window.addEventListener("pagehide", () => {  // the tab closes: the teacher's count drops now
  if (code && me) navigator.sendBeacon(ROUTE + code + "/left?me=" + me);
});
document.addEventListener("visibilitychange", () => {
  if (document.hidden && holding) holding.abort();
  start();
});
function styled(t) {
  if (!t) return;
  const root = document.documentElement.style;
  const set = {"--fg": t.textColor, "--bg": t.backgroundColor, "--soft": t.secondaryBackgroundColor,
               "--primary": t.primaryColor, "--font": t.font};
  for (const k in set) if (set[k]) root.setProperty(k, set[k]);
  document.documentElement.classList.toggle("dark", t.base === "dark");
  if (t.base === theme) return;
  theme = t.base;
  if (payload) { plot($("lec_figure"), payload.figure); drawQuestion(); }
}
window.addEventListener("message", (event) => {
  const data = event.data || {};
  if (data.type !== "streamlit:render") return;
  const args = data.args || {};
  styled(data.theme);
  const now = /^[A-Z0-9]{6}$/.test(args.code) ? args.code : null;
  if (now !== code) { known = null; shown = -2; if (holding) holding.abort(); }
  code = now;
  me = /^[A-Za-z0-9_-]{1,64}$/.test(args.student || "") ? args.student : null;
  nick = String(args.nickname || "");
  present = !!args.present;
  document.body.classList.toggle("present", present);
  const told = args.version;
  if (typeof told === "number" && (known === null || told > known)) known = told;
  rendered = true;
  load();
  start();
});
function fit() {
  const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
  send("streamlit:setFrameHeight", {height: height});
}
new ResizeObserver(fit).observe(document.body);
let resizing = null;
window.addEventListener("resize", () => {  // a phone turned, a window narrowed past PHONE_BELOW
  clearTimeout(resizing);
  resizing = setTimeout(() => {
    if (payload && drawnFor !== null && screen() !== drawnFor) {
      known = Math.max(known === null ? -2 : known, shown); shown = -2; load();
    }
  }, 300);
});
// Say "ready" until the page answers with the arguments: a ready sent before the page
// listens (an iframe served from the cache loads that fast) would be lost.
function ready() {
  if (rendered) return;
  send("streamlit:componentReady", {apiVersion: 1});
  setTimeout(ready, 250);
}
ready();
