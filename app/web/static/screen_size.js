// Tells the server whether this tab is a phone's (narrower than data.below px), so that its
// figures are laid out for it (viz/shared/narrow.py). Said only when it differs from what the
// server holds (data.known): a laptop's tab never reruns for it; a phone's reruns once, and a
// window resized across the line once more.

export default function screenSize({ data, setStateValue }) {
  if (!data) return undefined;
  const say = () => {
    const size = window.innerWidth < data.below ? "narrow" : "wide";
    if (size !== data.known) setStateValue("size", size);
  };
  say();
  let timer;
  const resized = () => { clearTimeout(timer); timer = setTimeout(say, 300); };
  window.addEventListener("resize", resized);
  return () => { window.removeEventListener("resize", resized); clearTimeout(timer); };
}
