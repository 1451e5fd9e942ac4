// One job, `#/jobs/<job_id>`: what it hands out (document, artifact), its targets and
// rollout policy, its progress per execution state (live: jobs_live.js), its executions
// paged with their state and status details, and cancel (with force) and delete. Whoever
// may read a job may end it (docs/jobs.md), so reading it is the console's cue; the
// server decides each call.
import * as api from "../api.js";
import { go, refresh } from "../router.js";
import { h, fill, checkbox, notice, table } from "../dom.js";
import { listView } from "../list.js";
import { progressBar } from "./jobs_progress.js";
import { followJob } from "./jobs_live.js";
import { when } from "../format.js";

const RUNNING = ["SCHEDULED", "IN_PROGRESS"];

/** The page of job `id`; its live progress and pending reads end with `life`. */
export async function jobPage(id, life) {
  const { job } = await api.get(api.path`/v2/jobs/${id}`);
  const state = h("strong", { id: "job-state" }, job.state);
  const reason = h("span", { id: "job-reason" }, job.reason ? ` (${job.reason})` : "");
  const progress = progressBar(job.counts);
  progress.id = "job-progress";
  const executions = h("div", {});
  const showExecutions = () => fill(executions, executionsList(job.id));
  showExecutions();
  const el = h("div", { id: "job-page", "data-job": job.id },
    h("p", {}, h("span", {}, job.description || "(no description)"), " ", h("code", {}, job.id)),
    h("p", {}, "State: ", state, reason),
    progress,
    actions(job),
    h("h2", {}, "What it hands out"),
    h("pre", { class: "json", id: "job-document", tabindex: 0, "aria-label": "The job's document" }, JSON.stringify(job.document, null, 2)),
    artifactOf(job.artifact),
    h("h2", {}, "Targets and policy"),
    table("Targets and rollout policy", [["Rule", ([k]) => k], ["Value", ([, v]) => v]], rules(job)),
    h("h2", {}, "Executions"),
    executions);
  let pending = false;  // a burst of changes (a large release) reads the executions once
  const show = (data) => {
    state.textContent = data.state;
    progress.update(data.counts);
    if (pending) return;
    pending = true;
    life.after(500, () => { pending = false; showExecutions(); });
  };
  followJob(life, el, job.id, {
    onChange: show,
    // read again (a gone job, or a failed read, leaves the page as it is)
    onReload: () => api.get(api.path`/v2/jobs/${job.id}`).then(({ job: again }) => show(again), () => {}),
  });
  return el;
}

function executionsList(jobId) {
  return listView({
    path: api.path`/v2/jobs/${jobId}/executions`, key: "executions", caption: "Executions, one per target device", search: false,
    filters: [{ name: "state", label: "Execution state", options: [["", "All"], ...["QUEUED", "IN_PROGRESS", "SUCCEEDED", "FAILED", "REJECTED", "TIMED_OUT", "CANCELED", "REMOVED"].map((s) => [s, s])] }],
    columns: [
      ["Device", (x) => h("code", {}, x.device_id)],
      ["State", (x) => x.state],
      ["Progress", (x) => `${x.progress ?? 0}%`],
      ["Attempts", (x) => String(x.attempts ?? "")],
      ["Status details", (x) => (x.status_details && Object.keys(x.status_details).length ? h("code", {}, JSON.stringify(x.status_details)) : "")],
      ["Last change", (x) => when(x.last_updated_date || x.queued_date)],
    ],
  });
}

function artifactOf(artifact) {
  if (!artifact) return h("p", { class: "muted" }, "No artifact.");
  const rows = Object.entries(artifact).map(([k, v]) => [k, typeof v === "object" ? JSON.stringify(v) : String(v)]);
  return table("Firmware artifact", [["Field", ([k]) => k], ["Value", ([, v]) => h("code", {}, v)]], rows);
}

function rules(job) {
  const rows = [["targets", JSON.stringify(job.targets)], ["continuous", job.continuous ? "yes" : "no"],
    ["project", job.project_id || "organization"], ["made", `${when(job.created_date)} by ${job.created_by || ""}`]];
  for (const [k, v] of Object.entries(job.policy || {})) if (v !== null) rows.push([`policy: ${k}`, String(v)]);
  return rows;
}

/** Cancel (with force: in-progress executions too) and delete (forced while it runs). */
function actions(job) {
  const force = checkbox("Force (also cancel executions in progress; delete while it runs)", { name: "force" });
  const running = RUNNING.includes(job.state);
  const cancel = h("button", { type: "button", id: "cancel-job", class: "danger", disabled: !running }, "Cancel job");
  const remove = h("button", { type: "button", id: "delete-job", class: "danger" }, "Delete job");
  const message = h("p", { class: "error", role: "alert" });
  cancel.addEventListener("click", () => act(message, async () => {
    await api.post(api.path`/v2/jobs/${job.id}/cancel`, { force: force.input.checked });
    notice("Job canceled");
    refresh();
  }));
  remove.addEventListener("click", () => act(message, async () => {
    await api.del(api.path`/v2/jobs/${job.id}`, { force: force.input.checked ? "true" : undefined });
    notice("Job deleted");
    go("jobs");
  }));
  return h("div", {}, h("div", { class: "actions" }, force.el, cancel, remove), message);
}

async function act(message, run) {
  message.textContent = "";
  try { await run(); } catch (error) { message.textContent = error.message; }
}
