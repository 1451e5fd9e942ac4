// Rollout jobs (docs/jobs.md): the jobs the caller may read, with their state and a
// progress bar of their executions per state, filtered by state and paged on the server;
// making a job; and one job's page (jobs_page.js), `#/jobs/<job_id>`.
import * as api from "../api.js";
import { register, go, link } from "../router.js";
import { h, field, checkbox, form, notice } from "../dom.js";
import { listView } from "../list.js";
import { progressBar } from "./jobs_progress.js";
import { jobBody, POLICY } from "./jobs_body.js";
import { jobPage } from "./jobs_page.js";
import { when } from "../format.js";

const JOB_STATES = ["SCHEDULED", "IN_PROGRESS", "COMPLETED", "CANCELED", "ABORTED"];

register({
  name: "jobs",
  title: "Jobs",
  heading: (args) => (args[0] ? "Job" : "Jobs"),
  // who may make a job (update devices) or read one (org and project admins, its maker)
  visible: (me) => me.inOrg && (me.isOrgAdmin || me.isProjectAdmin || me.may("device", "update")),
  render: (me, args, life) => (args[0] ? jobPage(args[0], life) : jobsPage()),
});

function jobsPage() {
  return h("div", {}, createJob(), listView({
    path: "/v2/jobs", key: "jobs", caption: "Jobs you may read", params: { desc: "true", order_by: "created_date" },
    filters: [{ name: "state", label: "State", options: [["", "All"], ...JOB_STATES.map((s) => [s, s])] }],
    columns: [
      ["Job", (j) => link(j.description || j.id, "jobs", j.id)],
      ["State", (j) => h("span", { class: "state" }, j.state)],
      ["Progress", (j) => progressBar(j.counts)],
      ["Made", (j) => when(j.created_date)],
    ],
  }));
}

function createJob() {
  const description = field("Description", { name: "description" });
  const kind = field("Targets", { type: "select", name: "target_kind", options: [
    ["device_ids", "Device IDs (comma-separated)"], ["group_id", "A group (its ID)"],
    ["project_id", "A project (its ID)"], ["tags", "Tags (comma-separated; any of them)"]] });
  const target = field("Target IDs or tags", { name: "target", required: true });
  const continuous = checkbox("Continuous: devices that join later get it too", { name: "continuous" });
  const documentBox = h("textarea", { id: "job-document", name: "document", rows: 4, cols: 60, placeholder: '{"operation": "install", "version": "2.0"}' });
  const group = field("Artifact: the group of the file (ID)", { name: "artifact_group" });
  const path = field("Artifact: the file's path", { name: "artifact_path", placeholder: "/fw/pump-2.0.bin" });
  const policy = POLICY.map(([name, label]) => field(label, { name, type: "number", min: 0 }));
  const fields = [description.el, kind.el, target.el, continuous.el,
    h("div", {}, h("label", { for: documentBox.id }, "Document each device gets (JSON)"), documentBox),
    h("fieldset", {}, h("legend", {}, "Firmware artifact (optional)"), group.el, path.el),
    h("fieldset", {}, h("legend", {}, "Rollout policy (empty: no limit, or the default)"), policy.map((p) => p.el)),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Create job"))];
  return h("details", {}, h("summary", {}, "Create a job"),
    form({ class: "stack", id: "create-job" }, fields, async (el) => {
      const values = Object.fromEntries(new FormData(el));
      values.continuous = continuous.input.checked;
      values.document = documentBox.value;
      const { job } = await api.post("/v2/jobs", jobBody(values));
      notice("Job created");
      go("jobs", job.id);
    }));
}
