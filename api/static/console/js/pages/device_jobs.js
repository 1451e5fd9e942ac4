// A device's jobs: its executions of the jobs the caller may list, newest first, from one
// paged list (`GET /v2/devices/{id}/executions`, docs/jobs.md; list.js pages it on the
// server), filtered by the execution's state; each links to the job's page
// (#/jobs/<job_id>). A caller who may read the device but list none of its jobs gets an
// empty list, and is told what the list holds.
import * as api from "../api.js";
import { link } from "../router.js";
import { h } from "../dom.js";
import { listView } from "../list.js";
import { when } from "../format.js";

const STATES = ["QUEUED", "IN_PROGRESS", "SUCCEEDED", "FAILED", "REJECTED", "TIMED_OUT", "CANCELED", "REMOVED"];

export function jobsView(device) {
  return h("div", { id: "device-jobs" },
    h("p", { class: "muted" }, "This device's part in the jobs you may read, the newest first."),
    listView({
      path: api.path`/v2/devices/${device.id}/executions`, key: "executions", caption: "Its executions of the jobs you may read",
      search: false,
      filters: [{ name: "state", label: "State", options: [["", "All"], ...STATES.map((s) => [s, s])] }],
      columns: [
        ["Job", (e) => link(e.job_description || e.job_id, "jobs", e.job_id)], ["Job state", (e) => e.job_state || ""],
        ["This device", (e) => e.state], ["Progress", (e) => `${e.progress ?? 0}%`], ["Queued", (e) => when(e.queued_date)],
      ],
    }));
}
