// The body of POST /v2/jobs from the console's form (docs/jobs.md): one kind of target,
// the document, the firmware artifact by group and path, the rollout policy. Left empty,
// a rule is not sent (the server's default applies); the server judges the rest and its
// 400s are shown as they come.
import { optionalJson } from "../format.js";

export const POLICY = [
  ["max_per_minute", "Most released a minute"],
  ["max_in_progress", "Most in progress at once"],
  ["abort_percent", "Abort above this % failed"],
  ["abort_min_finished", "Once this many finished"],
  ["timeout_seconds", "Timeout (seconds)"],
  ["max_retries", "Retries"],
];

/** `values`: the form's fields by name (strings, `continuous` a boolean). */
export function jobBody(values) {
  const body = { targets: targets(values.target_kind, values.target.trim()) };
  if (values.description.trim()) body.description = values.description.trim();
  body.document = optionalJson(values.document, "Document") ?? {};
  if (values.continuous) body.continuous = true;
  if (values.artifact_group.trim() || values.artifact_path.trim()) {
    body.artifact = { group_id: values.artifact_group.trim(), path: values.artifact_path.trim() };
  }
  const policy = {};
  for (const [name] of POLICY) if (values[name] !== "") policy[name] = Number(values[name]);
  if (Object.keys(policy).length) body.policy = policy;
  return body;
}

function targets(kind, text) {
  const list = text.split(",").map((part) => part.trim()).filter(Boolean);
  if (kind === "device_ids" || kind === "tags") return { [kind]: list };
  return { [kind]: text };
}
