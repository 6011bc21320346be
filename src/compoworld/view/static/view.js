// CompoWorld view: lazy loading of long episode lists, and deep links that open folded sections.
"use strict";
function openTarget() {
  const id = decodeURIComponent(location.hash.slice(1));
  const el = id && document.getElementById(id);
  if (!el) return;
  for (let p = el; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
  el.scrollIntoView({ block: "center" });
}
function lazyEpisodes() {
  const table = document.querySelector("table.episodes[data-api]");
  const button = document.querySelector("button.more");
  if (!table || !button) return;
  let next = Number(table.dataset.next), busy = false;
  const total = Number(table.dataset.total);
  async function more() {
    if (busy || next >= total) return;
    busy = true;
    const sep = table.dataset.api.includes("?") ? "&" : "?";
    const r = await fetch(`${table.dataset.api}${sep}offset=${next}&limit=100&html=1`);
    const data = await r.json();
    table.tBodies[0].insertAdjacentHTML("beforeend", data.html);
    next += data.episodes.length;
    busy = false;
    if (next >= total || !data.episodes.length) button.remove();
  }
  button.addEventListener("click", more);
  new IntersectionObserver((es) => es.some((e) => e.isIntersecting) && more()).observe(button);
}
document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("select[data-filter]").forEach((s) => s.addEventListener("change", () => s.form.submit()));
  lazyEpisodes();
  openTarget();
});
window.addEventListener("hashchange", openTarget);
