// A device's jobs: the interface lists a job's executions, not a device's, to people
// (`/v2/devices/{id}/jobs` is the device's own), so this reads the newest jobs the caller
// may read (one page) and asks each for this device's execution; each links to the job's
// page (#/jobs/<job_id>). Callers who may read no job see that said.
import * as api from "../api.js";
import { link } from "../router.js";
import { h, fill, table } from "../dom.js";

const JOBS = 25;

export function jobsView(device) {
  const el = h("div", { id: "device-jobs", class: "list" }, h("p", { class: "muted" }, "Loading…"));
  el.ready = load(device, el);
  return el;
}

async function load(device, el) {
  let jobs;
  try {
    ({ jobs } = await api.get("/v2/jobs", { limit: JOBS, desc: "true" }));  // the newest first
  } catch (error) {
    return fill(el, h("p", { class: "muted" }, `No jobs to show (${error.message}).`));
  }
  const found = await Promise.all(jobs.map((job) => api.get(api.path`/v2/jobs/${job.id}/executions/${device.id}`)
    .then((r) => ({ job, execution: r.execution }), () => null)));
  const rows = found.filter(Boolean);
  if (!rows.length) return fill(el, h("p", { class: "muted" }, jobs.length ? `None of the ${jobs.length} newest jobs you may read targets this device.` : "No job you may read."));
  fill(el, table(`Among the ${JOBS} newest jobs you may read`, [
    ["Job", ({ job }) => link(job.description || job.id, "jobs", job.id)], ["Job state", ({ job }) => job.state],
    ["This device", ({ execution }) => execution.state], ["Progress", ({ execution }) => `${execution.progress ?? 0}%`],
  ], rows));
}
