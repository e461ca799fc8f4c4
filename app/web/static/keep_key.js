// Keeps the teacher's hold on a class in this browser, out of the address
// (app/web/lecture/teacher_key.py): the address loses its key= (its history entry replaced,
// so Back never shows it again), and the teach route is sent a one-time code for the pass it
// keeps in a cookie no script can read (HttpOnly). Says back {code, ok} once done.

const sent = new Set();  // one-time codes already sent from this page

export default function keepKey({ data, setTriggerValue }) {
  if (!data || !data.once || sent.has(data.once)) return undefined;
  sent.add(data.once);
  const address = new URL(window.location.href);
  if (address.searchParams.has("key")) {
    address.searchParams.delete("key");
    window.history.replaceState(window.history.state, "", address.toString());
  }
  fetch(data.path, {
    method: "POST", credentials: "same-origin", cache: "no-store",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ class: data.code, once: data.once }),
  }).then((r) => r.ok, () => false)
    .then((ok) => setTriggerValue("kept", { code: data.code, ok }));
  return undefined;
}
