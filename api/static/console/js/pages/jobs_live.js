// A job's progress as it happens, from the live changes stream (GET /v2/events?kinds=jobs,
// docs/events.md), read by the console's one stream reader (device_live.js: fetch with the
// token in the Authorization header, never in the URL; closed when the page is left or
// shown again: its life ends). Each `jobs` event carries the job's state and its counts per execution
// state, which is all the job's page shows live; a `reload` means changes were missed.
import { watchLive } from "./device_live.js";

/** Follow the job `jobId` while the page of `life` is shown: `onChange(data)` for each of
 * its events; `onReload()` for a `reload`, and each time the stream opens (a change made
 * between the page's read of the job and the stream opening would be missed otherwise).
 * `el.dataset.live` is "open" while the stream is. */
export function followJob(life, el, jobId, { onChange, onReload }) {
  return watchLive(life, el, {
    kinds: "jobs",
    onOpen: onReload,
    onEvent: (event) => {
      if (event.event === "reload") onReload();
      else if (event.event === "jobs" && event.data.job_id === jobId) onChange(event.data);
    },
  });
}
