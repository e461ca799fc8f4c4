"""The Lecture page as a browser sees it: what its slide counter shows and when it changed, and
the flags that keep every student's page in the foreground (used by the live-class browser test
and bench/class_capacity.py)."""

from __future__ import annotations

# Each student is a device of their own, in the foreground: no background-tab throttling.
FOREGROUND = [
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
]
COUNTER = "() => document.querySelector('.st-key-lec_counter')?.innerText?.trim()"
# Notes in window.__shown the page's own time at which each slide counter text first showed.
WATCH = """() => {
  window.__shown = {};
  const note = () => {
    const el = document.querySelector('.st-key-lec_counter');
    const text = el && el.innerText.trim();
    if (text && !(text in window.__shown)) window.__shown[text] = Date.now();
  };
  note();
  new MutationObserver(note).observe(document.body,
    {subtree: true, childList: true, characterData: true});
}"""


def shows(n: int) -> str:
    """A page function true once the counter shows slide n of the 14 of deck section3."""
    return f"() => ({COUNTER})() === '{n} / 14'"
