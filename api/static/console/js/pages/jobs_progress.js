// A job's progress: one bar with a segment per execution state (its width the share of
// the job's executions in that state) and the counts beside it as text, so the figures
// are read by everyone, not only seen as colours.
import { h, fill } from "../dom.js";

export const STATES = ["QUEUED", "IN_PROGRESS", "SUCCEEDED", "FAILED", "REJECTED", "TIMED_OUT", "CANCELED", "REMOVED"];

/** An element showing `counts` ({STATE: n}); `update(counts)` on it shows new ones. */
export function progressBar(counts) {
  const bar = h("div", { class: "progress", role: "img" });
  const legend = h("span", { class: "progress-counts" });
  const el = h("div", { class: "job-progress" }, bar, legend);
  el.update = (next) => draw(bar, legend, next || {});
  el.update(counts);
  return el;
}

function draw(bar, legend, counts) {
  const total = STATES.reduce((sum, state) => sum + (counts[state] || 0), 0);
  const present = STATES.filter((state) => counts[state]);
  const text = present.map((state) => `${state} ${counts[state]}`).join(", ") || "no executions";
  bar.setAttribute("aria-label", `${total} executions: ${text}`);
  fill(bar, present.map((state) => h("span", {
    class: `seg seg-${state.toLowerCase()}`, "data-state": state,
    title: `${state}: ${counts[state]}`,
  })));
  // widths set through the CSSOM: the CSP forbids style attributes written as text
  [...bar.children].forEach((seg, i) => { seg.style.width = `${(100 * counts[present[i]]) / total}%`; });
  fill(legend, text);
}
