"""App latency: what a user waits for on attnlens, against the bare Streamlit page, same run.

Two servers run side by side (bench/servers.py): `attnlens serve` and the bare page
(bench/minimal_app.py: one text box, one heatmap). Each scenario does the same action on both,
alternating which goes first, `repeats` times after a warm-up, and every measurement waits
until the page is quiet (no message, no chart change for 0.6 s) before the next one starts, so
one page's tail (its other charts, the server's garbage collection) never falls into the other
page's measurement. Times come from the page's own clock (bench/browser.py): the action → the
first frame that shows its result.

    .venv/bin/python -m bench.app_latency [--repeats 7] [--only reverse minilm decode visits]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from attnlens.viz.shared.labels import position_labels
from bench.browser import Tab, Timing, drawn_text_has, launch, title_has, x_labels_are
from bench.servers import Server, attnlens_server, bare_server

REPEATS = 7
REVERSE_LENGTHS = (8, 32, 63)  # tokens, </s> included; 63 is the model's longest input
_WORDS = """the cat dog sat on mat house tree big small red blue green runs walks sees a an and
but if then when where who what why how old new good bad day night sun moon water fire king queen
road car book"""
WORDS = tuple(_WORDS.split())  # one wordpiece each in minilm's vocabulary: labels known ahead
PAGES = ("explore", "decode", "inside", "heads", "experiments", "training", "lecture")
# Pages that draw no chart until asked: what says they are drawn (else: every chart drawn).
READY = {
    "experiments": "(plots) => plots.length > 0 ? plots.every((p) => p.data)"
    ' : !!document.querySelector(\'[data-testid="stMain"] [data-testid="stAlert"]\')',
}
DECODE_QUERY = "page=decode&model=translate&strategy=beam&beam_size=4&text=the+cat+sees+a+house"


@dataclass
class Result:
    """One scenario: ours and the reference's timings (the reference may be absent), and the
    bare page inside attnlens's frame (bench/minimal_app.py, frame=1) where it was measured."""

    name: str
    ours: list[Timing] = field(default_factory=list)
    reference: list[Timing] = field(default_factory=list)
    framed: list[Timing] = field(default_factory=list)

    def median(self, side: str = "ours", what: str = "shown") -> float:
        values = [getattr(t, what) for t in getattr(self, side)]
        if not values or any(v is None for v in values):
            return float("inf")  # never shown: the target cannot be met
        return float(statistics.median(values))


def char_labels(text: str) -> list[str]:
    """The key labels of a character model's heatmap (and the bare page's) for text."""
    return position_labels([*text, "</s>"])


def word_labels(words: list[str]) -> list[str]:
    """The key labels of minilm's encoder heatmap for words joined by spaces."""
    return position_labels(["[CLS]", *words, "[SEP]"])


def random_chars(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(n))


def submit(tab: Tab, text: str) -> Callable[[], None]:
    """Type text into the page's "Text" box (replacing what was there) and apply it: Enter, or
    Ctrl+Enter in the box of several lines a long text gets."""

    def act() -> None:
        box = tab.page.get_by_label("Text", exact=True)
        several_lines = box.evaluate("(e) => e.tagName === 'TEXTAREA'")
        box.fill(text)
        box.press("Control+Enter" if several_lines else "Enter")

    return act


OVERVIEW = (  # Explore's head overview canvas (past 256 positions), or null
    "[...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')].map((h) =>"
    " h.shadowRoot && h.shadowRoot.querySelector('canvas.hz-canvas[data-drawn]'))"
    ".find(Boolean) || null"
)


def overview_of(tab: Tab, n: int) -> str:
    """A page predicate: the head's overview canvas spans n keys and has been drawn again since
    now (a text of the same length drew one before: its count of draws tells them apart)."""
    before = tab.page.evaluate(f"() => {{ const c = {OVERVIEW}; return c && c.dataset.drawn; }}")
    return (
        f"() => {{ const c = {OVERVIEW}; return !!c && c.dataset.drawn !== {json.dumps(before)}"
        f" && JSON.parse(c.dataset.window).cols[1] === {n}; }}"
    )


def press_in_box(tab: Tab, key: str) -> Callable[[], None]:
    """Press one key at the end of the text (a character, or Backspace), no Enter."""

    def act() -> None:
        tab.page.get_by_label("Text", exact=True).focus()
        tab.page.keyboard.press("End")
        tab.page.keyboard.press(key)

    return act


def pick_head(tab: Tab, head: int) -> Callable[[], None]:
    def act() -> None:
        tab.page.get_by_role("combobox", name="Head").click()
        tab.page.get_by_role("option", name=str(head), exact=True).click()

    return act


def alternate(pair: dict[str, Tab], repeats: int) -> Iterator[tuple[int, str, Tab]]:
    """(round, side, tab): a warm-up round (-1), then rounds with the order swapped each time."""
    for i in range(-1, repeats):
        sides = list(pair) if i % 2 == 0 else list(pair)[::-1]
        for side in sides:
            yield i, side, pair[side]


def run(
    name: str,
    pair: dict[str, Tab],
    repeats: int,
    step: Callable[[str, Tab], tuple[Callable[[], None], str, str]],
) -> Result:
    """A scenario: step(side, tab) gives (action, what shows its result, its start stamp)."""
    result = Result(name)
    for i, side, tab in alternate(pair, repeats):
        act, shows, since = step(side, tab)
        timing = tab.measure(act, shows, since)
        if i >= 0:
            getattr(result, side).append(timing)
    print(f"  {name}: ours {result.median('ours') * 1000:.0f} ms", flush=True)
    return result


def opened(
    browser: Any, ours: Server, bare: Server, query: str, bare_query: str, framed: bool = False
) -> dict[str, Tab]:
    """Our page and the bare page open on the queries, and with framed the bare page inside
    attnlens's frame too (the same control)."""
    pair = {"ours": Tab(browser, ours), "reference": Tab(browser, bare)}
    pair["ours"].open(query)
    pair["reference"].open(bare_query)
    if framed:
        pair["framed"] = Tab(browser, bare)
        pair["framed"].open("&".join(q for q in (bare_query, "frame=1") if q))
    return pair


def closed(pair: dict[str, Tab]) -> None:
    for tab in pair.values():
        tab.close()


def reverse_results(browser: Any, ours: Server, bare: Server, repeats: int) -> list[Result]:
    """Explore on reverse: Enter at three lengths, and typing with the live box."""
    rng, out = random.Random(0), []
    pair = opened(browser, ours, bare, "page=explore&model=reverse", "", framed=True)
    for n in REVERSE_LENGTHS:

        def step(side: str, tab: Tab, n: int = n) -> tuple[Callable[[], None], str, str]:
            text = random_chars(rng, n - 1)
            return submit(tab, text), x_labels_are([char_labels(text)]), "Enter"

        out.append(run(f"Explore reverse: Enter → heatmap, {n} tokens", pair, repeats, step))
    closed(pair)
    live = opened(browser, ours, bare, "page=explore&model=reverse&text=abcdefghij", "live=1")
    live["reference"].measure(submit(live["reference"], "abcdefghij"), "() => true", "Enter")
    texts = {side: "abcdefghij" for side in live}

    def typing(side: str, tab: Tab) -> tuple[Callable[[], None], str, str]:
        if texts[side] == "abcdefghij":
            key = rng.choice(string.ascii_lowercase)
            texts[side] += key
        else:
            key, texts[side] = "Backspace", "abcdefghij"
        return press_in_box(tab, key), x_labels_are([char_labels(texts[side])]), "typed"

    out.append(run("Explore reverse: typing → heatmap (live box)", live, repeats, typing))
    closed(live)
    return out


def minilm_results(browser: Any, ours: Server, bare: Server, repeats: int) -> list[Result]:
    """Explore on minilm: Enter with 32 tokens, 512 tokens (the full page), another head."""
    rng, out = random.Random(1), []
    pair = opened(browser, ours, bare, "page=explore&model=minilm", "")

    def short(side: str, tab: Tab) -> tuple[Callable[[], None], str, str]:
        if side != "ours":
            text = random_chars(rng, 31)
            return submit(tab, text), x_labels_are([char_labels(text)]), "Enter"
        words = [rng.choice(WORDS) for _ in range(30)]
        return submit(tab, " ".join(words)), x_labels_are([word_labels(words)]), "Enter"

    out.append(run("Explore minilm: Enter → heatmap, 32 tokens", pair, repeats, short))

    def long(side: str, tab: Tab) -> tuple[Callable[[], None], str, str]:
        words = [rng.choice(WORDS) for _ in range(510)]
        return submit(tab, " ".join(words)), overview_of(tab, len(words) + 2), "Enter"

    out.append(run("Explore minilm: Enter → full page, 512 tokens", {"ours": pair["ours"]},
                   max(3, repeats // 2), long))  # fmt: skip
    closed(pair)
    heads = opened(browser, ours, bare, "page=explore&model=minilm", "control=select", framed=True)
    current = {side: 0 for side in heads}

    def another_head(side: str, tab: Tab) -> tuple[Callable[[], None], str, str]:
        current[side] = rng.choice([h for h in range(12) if h != current[side]])
        return pick_head(tab, current[side]), title_has(f"head {current[side]}"), "clicked"

    out.append(run("Explore minilm: another head → heatmap", heads, repeats, another_head))
    closed(heads)
    return out


def decode_results(browser: Any, ours: Server, bare: Server, repeats: int) -> list[Result]:
    """Decode on translate with beam search (4 beams): the step slider, one step at a time."""
    pair = opened(browser, ours, bare, DECODE_QUERY, "control=slider", framed=True)
    position = {side: (0, 1) for side in pair}  # (step, direction): back and forth over 0..3

    def move(side: str, tab: Tab) -> tuple[Callable[[], None], str, str]:
        at, way = position[side]
        if not 0 <= at + way <= 3:
            way = -way
        position[side] = (at + way, way)
        key = "ArrowRight" if way > 0 else "ArrowLeft"
        slider = tab.page.get_by_role("slider", name="Step")
        shows = f"step {at + way} ·"  # our page draws the step itself (app/web/decode/step_view.py)
        done = drawn_text_has(".ds-cands .ds-title", shows) if side == "ours" else title_has(shows)
        return (lambda: slider.press(key)), done, key

    for tab in pair.values():
        tab.page.get_by_role("slider", name="Step").focus()
    out = [run("Decode translate, beam 4: step slider → chart", pair, repeats, move)]
    closed(pair)
    return out


def first_visits(browser: Any, ours: Server, bare: Server) -> list[Result]:
    """Each page opened in a fresh tab (the server has the models loaded: a warm-up visit
    first), against the bare page's first visit."""
    out = []
    for page in PAGES:
        warm = Tab(browser, ours)
        warm.open(f"page={page}&model=reverse", ready=READY.get(page))
        warm.close()
        result = Result(f"First visit: {page}")
        for side, server, query in (("ours", ours, f"page={page}&model=reverse"),
                                    ("reference", bare, "")):  # fmt: skip
            tab = Tab(browser, server)
            seconds = tab.open(query, ready=READY.get(page) if side == "ours" else None)
            tab.close()
            getattr(result, side).append(Timing(seconds, seconds, None, 0.0, 0.0, 0, (), ()))
        print(f"  {result.name}: {result.median() * 1000:.0f} ms", flush=True)
        out.append(result)
    return out


SIDEBAR = {
    "explore": "Explore", "decode": "Decode", "inside": "Inside the Transformer",
    "heads": "Heads", "experiments": "Experiments", "training": "Training", "lecture": "Lecture",
}  # fmt: skip
ALL_DRAWN = "(plots) => plots.length > 0 && plots.every((p) => p.data)"
TITLED = "!!document.querySelector('[data-testid=stMain] h1')?.innerText?.trim()"


def visits_in_app(browser: Any, ours: Server) -> list[Result]:
    """Each page reached from the open app by its link in the sidebar, as a user who has the
    app open visits it (the models loaded, each page opened once in first_visits): from the
    click until the page's title shows and its charts are drawn and quiet. One tab starts on
    Decode and visits the others in turn (Lecture last: it folds the sidebar), another goes
    from Explore to Decode."""
    out = []
    for start, pages in (("decode", [p for p in PAGES if p != "decode"]), ("explore", ["decode"])):
        tab = Tab(browser, ours)
        tab.open(f"page={start}&model=reverse", ready=READY.get(start))
        for page in pages:
            wait = (
                f"(plots) => new URLSearchParams(location.search).get('page') === '{page}' "
                f"&& {TITLED} && ({READY.get(page, ALL_DRAWN)})(plots)"
            )
            nav = tab.page.locator('[data-testid="stSidebarNav"]')
            timing = tab.measure(nav.get_by_text(SIDEBAR[page], exact=True).click, wait, "clicked")
            result = Result(f"First visit from the open app: {page}")
            result.ours.append(timing)
            print(f"  {result.name}: {timing.full * 1000:.0f} ms", flush=True)
            out.append(result)
        tab.close()
    return sorted(out, key=lambda r: PAGES.index(r.name.rsplit(" ", 1)[-1]))


GROUPS: dict[str, Callable[..., list[Result]]] = {
    "reverse": reverse_results,
    "minilm": minilm_results,
    "decode": decode_results,
}


def results(repeats: int, only: list[str] | None = None) -> list[Result]:
    """Every scenario (or those of the named groups: reverse, minilm, decode, visits)."""
    from playwright.sync_api import sync_playwright

    wanted = only or [*GROUPS, "visits"]
    out: list[Result] = []
    with attnlens_server("reverse") as ours, bare_server() as bare, sync_playwright() as p:
        browser = launch(p)
        try:
            for group, measure in GROUPS.items():
                if group in wanted:
                    out += measure(browser, ours, bare, repeats)
            if "visits" in wanted:
                out += first_visits(browser, ours, bare)
                out += visits_in_app(browser, ours)
        finally:
            browser.close()
    return out


def table(found: list[Result]) -> str:
    """Medians of both sides, and where the time went: the server's first message after the
    action, the message that brought the chart (chart msg) and the drawing after it (drawn),
    ours / bare, the last chart drawn (page), browser and server CPU per action (ours / bare),
    and the bytes the server sent us. Where the bare page inside attnlens's frame was measured
    too (framed), its median and ours against it: how much of the ratio is Streamlit's frame
    (navigation, sidebar, title, pickers) and how much is attnlens's own work."""
    rows = [
        f"{'scenario (medians, ms)':<48} {'ours':>6} {'bare':>6} {'ratio':>6} {'framed':>7} "
        f"{'÷framed':>8} {'1st msg':>8} {'chart msg':>10} {'drawn':>9} "
        f"{'page':>6} {'browser CPU':>12} {'server CPU':>11} {'KB':>5}"
    ]
    for r in found:
        ours, bare = r.median("ours"), r.median("reference")
        ratio = f"{ours / bare:.2f}" if r.reference else "-"
        framed = f"{ours / r.median('framed'):.2f}" if r.framed else "-"
        first = [x.first_message for x in r.ours if x.first_message is not None]
        rows.append(
            f"{r.name:<48} {ours * 1000:>6.0f} {_ms(r, 'reference', 'shown'):>6} {ratio:>6} "
            f"{_ms(r, 'framed', 'shown'):>7} {framed:>8} "
            f"{(statistics.median(first) * 1000 if first else 0):>8.0f} "
            f"{_ms(r, 'ours', 'chart_message') + '/' + _ms(r, 'reference', 'chart_message'):>10} "
            f"{_drawn(r, 'ours') + '/' + _drawn(r, 'reference'):>9} "
            f"{r.median('ours', 'full') * 1000:>6.0f} "
            f"{_ms(r, 'ours', 'browser_cpu') + '/' + _ms(r, 'reference', 'browser_cpu'):>12} "
            f"{_ms(r, 'ours', 'server_cpu') + '/' + _ms(r, 'reference', 'server_cpu'):>11} "
            f"{statistics.median(x.received for x in r.ours) / 1000:>5.0f}"
        )
    return "\n".join(rows)


def _drawn(r: Result, side: str) -> str:
    """Median ms from the message that brought the chart to the chart showing it."""
    gaps = [t.shown - t.chart_message for t in getattr(r, side)
            if t.shown is not None and t.chart_message is not None]  # fmt: skip
    return f"{statistics.median(gaps) * 1000:.0f}" if gaps else "-"


def _ms(r: Result, side: str, what: str) -> str:
    values = [getattr(t, what) for t in getattr(r, side)]
    return f"{statistics.median(values) * 1000:.0f}" if values and None not in values else "-"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--only", nargs="*", help="groups: reverse minilm decode visits")
    args = parser.parse_args(argv)
    print(table(results(args.repeats, args.only)))


if __name__ == "__main__":
    main()
