// A job's progress as it happens, from the live changes stream (GET /v2/events?kinds=jobs,
// docs/events.md): read with fetch and the token in the Authorization header (never in
// the URL), parsed as Server-Sent Events. Each `jobs` event carries the job's state and
// its counts per execution state, which is all the job's page shows live; a `reload`
// means changes were missed, so the page reads the job again.
import * as api from "../api.js";

/** Follow the job `jobId` while `el` is on the page: `onChange(data)` for each of its
 * events, `onReload()` once the stream is open (a change made since the page read the
 * job would be missed otherwise) and for a `reload`. Ends when `el` leaves the page (another page
 * shown, or this one shown again), the stream ends, or the session does: an account
 * holds few streams (events_max_streams), so none is left open behind a page. `el.dataset.live` is "1" while open. */
export async function followJob(el, jobId, { onChange, onReload }) {
  const stop = new AbortController();
  const leave = () => { if (!el.isConnected) stop.abort(); };
  window.addEventListener("hashchange", leave);
  const watch = setInterval(leave, 1000);  // shown again in place (a refresh), or signed out
  try {
    const response = await api.stream("/v2/events", { kinds: "jobs" }, stop.signal);
    el.dataset.live = "1";
    await onReload();  // what changed between the page's first read and the stream opening
    for await (const event of events(response.body)) {
      if (!el.isConnected) break;
      if (event.event === "reload") await onReload();
      else if (event.event === "end") break;
      else if (event.event === "jobs" && event.data.job_id === jobId) await onChange(event.data);
    }
  } catch (error) {
    if (error.name !== "AbortError") el.dataset.liveError = error.message;
  } finally {
    el.dataset.live = "";
    window.removeEventListener("hashchange", leave);
    clearInterval(watch);
    stop.abort();
  }
}

/** The events of an SSE body, each {event, data} (data parsed as JSON). */
async function* events(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const parsed = parse(block);
      if (parsed) yield parsed;
    }
  }
}

function parse(block) {
  let event = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;  // a keep-alive comment
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (name === "event") event = value;
    else if (name === "data") data.push(value);
  }
  if (!data.length) return null;
  try {
    return { event, data: JSON.parse(data.join("\n")) };
  } catch {
    return null;
  }
}
