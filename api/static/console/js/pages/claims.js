// Provisioning claims (docs/provisioning.md), for org and project admins: the claims the
// caller may manage, paged on the server; making one (name, project, uses, expiry, the
// template its devices get), whose secret and QR code are shown once, as the server
// answers them; and revoking one.
import * as api from "../api.js";
import { register } from "../router.js";
import { h, fill, field, form, notice } from "../dom.js";
import { listView } from "../list.js";
import { when } from "../format.js";
import { claimBody } from "./claims_body.js";

register({
  name: "claims",
  title: "Claims",
  visible: (me) => me.inOrg && (me.isOrgAdmin || me.isProjectAdmin),
  render: (me) => claimsPage(me),
});

async function claimsPage(me) {
  const projects = await projectOptions();
  const shown = h("div", { id: "claim-created" });
  const holder = h("div", {});
  const names = Object.fromEntries(projects);
  const reload = () => fill(holder, claimsList(reload, names));
  reload();
  return h("div", {}, createClaim(me, projects, shown, reload), shown, holder);
}

/** The projects the caller may see, for the new claim's project (one page: a site's
 * projects are few; the server refuses a project the caller does not administer). */
async function projectOptions() {
  const { projects = [] } = await api.get("/v2/projects", { limit: 100 });
  return projects.map((p) => [p.id, p.name]);
}

function claimsList(reload, projectNames) {
  return listView({
    path: "/v2/provisioning/claims", key: "claims", caption: "Claims you manage",
    columns: [
      ["Name", (c) => c.name],
      ["State", (c) => h("span", { class: `state state-${c.state}` }, c.state)],
      ["Uses", (c) => `${c.uses} of ${c.max_uses}`],
      ["Expires", (c) => when(c.expires_date)],
      ["Project", (c) => (c.project_id ? projectNames[c.project_id] || h("code", {}, c.project_id) : "organization")],
      ["ID", (c) => h("code", {}, c.id)],
      ["", (c) => (c.state === "revoked" ? "" : revokeButton(c, reload))],
    ],
  });
}

function revokeButton(claim, reload) {
  const button = h("button", { type: "button", class: "danger", "data-claim": claim.id, "aria-label": `Revoke ${claim.name}` }, "Revoke");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      await api.del(api.path`/v2/provisioning/claims/${claim.id}`);
      notice(`Claim ${claim.name} revoked`);
      reload();
    } catch (error) {
      notice(error.message);
      button.disabled = false;
    }
  });
  return button;
}

function createClaim(me, projects, shown, reload) {
  const name = field("Name", { name: "claim_name", required: true });
  const options = [...(me.isOrgAdmin ? [["", "None: the organization"]] : []), ...projects];
  const project = field("Project", { type: "select", name: "project_id", options });
  const uses = field("Devices it may enroll (uses)", { name: "max_uses", type: "number", min: 1, max: 100000, value: 1 });
  const expires = field("Expires (end of the day, UTC; empty: in 7 days)", { name: "expires", type: "date" });
  const template = h("textarea", { id: "claim-template", name: "template", rows: 4, cols: 60,
    placeholder: '{"tags": ["line-4"], "groups": {"<group ID>": {"can_read": true}}, "iot_scopes": {}}' });
  const fields = [name.el, project.el, uses.el, expires.el,
    h("div", {}, h("label", { for: template.id }, "Template its devices get (JSON: groups, tags, iot_scopes; optional)"), template),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Create claim"))];
  return h("details", {}, h("summary", {}, "Create a claim"),
    form({ class: "stack", id: "create-claim" }, fields, async () => {
      const body = claimBody({ name: name.input.value, project: project.input.value, uses: uses.input.value,
        expires: expires.input.value, template: template.value });
      const { claim } = await api.post("/v2/provisioning/claims", body);
      showOnce(shown, claim);
      notice("Claim created");
      reload();
    }));
}

/** The new claim's secret and QR code, shown this once: the server keeps only the
 * secret's hash, so nothing here can be shown again. The QR code is the server's own
 * image (it holds the site's enroll URL, from its base_url, which the browser cannot know). */
function showOnce(shown, claim) {
  const done = h("button", { type: "button", class: "plain" }, "I have saved it: hide");
  done.addEventListener("click", () => fill(shown));
  fill(shown, h("section", { class: "once", "aria-labelledby": "claim-once" },
    h("h2", { id: "claim-once" }, `Claim "${claim.name}" made: save its secret now`),
    h("p", {}, "The secret and its QR code are shown this once: the server keeps only a hash of it."),
    h("p", {}, "Claim ID ", h("code", { id: "claim-id" }, claim.id)),
    h("p", {}, "Secret ", h("code", { id: "claim-secret" }, claim.secret)),
    h("img", { class: "qr", id: "claim-qr", src: claim.qr_code, alt: `QR code of the claim ${claim.name} and its secret` }),
    h("div", { class: "actions" }, done)));
  done.focus();
}
