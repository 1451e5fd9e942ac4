// The body of POST /v2/provisioning/claims from the console's form: what the person left
// empty is not sent (the server's defaults apply), and JSON that does not parse is said
// before anything is sent. Everything else is the server's to refuse (its 400s shown).
import { optionalJson } from "../format.js";

export function claimBody({ name, project, uses, expires, template }) {
  const body = { name: name.trim() };
  if (project) body.project_id = project;
  if (uses) body.max_uses = Number(uses);
  if (expires) body.expires_date = `${expires}T23:59:59Z`;
  const parsed = optionalJson(template, "Template");
  if (parsed !== undefined) body.template = parsed;
  return body;
}
