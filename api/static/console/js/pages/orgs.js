// Organizations (staff: every org, and creating one) and the caller's organization with
// its projects (org admins, and staff signed in to an org).
import * as api from "../api.js";
import { register, refresh } from "../router.js";
import { h, field, form, notice } from "../dom.js";
import { listView } from "../list.js";

register({
  name: "orgs",
  title: "Organizations",
  visible: (me) => me.isStaff || me.isOrgAdmin,
  async render(me) {
    const parts = [];
    if (me.isStaff) parts.push(h("h2", {}, "All organizations"), createOrg(), orgList());
    if (me.inOrg) parts.push(...(await myOrg()), h("h2", {}, "Projects"), me.may("project", "create") ? createProject() : null, projectList());
    return h("div", {}, parts);
  },
});

function orgList() {
  return listView({
    path: "/v2/orgs", key: "orgs", caption: "Organizations",
    columns: [["Name", (o) => o.name], ["Alias", (o) => o.alias || ""], ["Active", (o) => (o.is_active === false ? "suspended" : "yes")], ["ID", (o) => h("code", {}, o.id)]],
  });
}

function createOrg() {
  const name = field("New organization's name", { name: "name", required: true });
  const alias = field("Alias (used to sign in)", { name: "alias" });
  return form({ class: "row", id: "create-org" }, [name.el, alias.el, h("button", { type: "submit" }, "Create organization")], async () => {
    const body = { name: name.input.value.trim() };
    if (alias.input.value.trim()) body.alias = alias.input.value.trim();
    await api.post("/v2/orgs", body);
    notice(`Created ${body.name}`);
    refresh();
  });
}

async function myOrg() {
  const { org } = await api.get("/v2/my-org");
  return [h("h2", {}, `This organization: ${org.name}`),
    h("p", {}, "Alias ", h("code", { id: "org-alias" }, org.alias || "(none)"), `, ID `, h("code", {}, org.id),
      `; MFA required: ${org.mfa_required ? "yes" : "no"}`)];
}

function projectList() {
  return listView({
    path: "/v2/projects", key: "projects", caption: "Projects",
    columns: [["Name", (p) => p.name], ["Alias", (p) => p.alias || ""], ["ID", (p) => h("code", {}, p.id)]],
  });
}

function createProject() {
  const name = field("New project's name", { name: "project_name", required: true });
  const alias = field("Alias", { name: "project_alias" });
  return form({ class: "row", id: "create-project" }, [name.el, alias.el, h("button", { type: "submit" }, "Create project")], async () => {
    const body = { name: name.input.value.trim() };
    if (alias.input.value.trim()) body.alias = alias.input.value.trim();
    await api.post("/v2/projects", body);
    notice(`Created ${body.name}`);
    refresh();
  });
}
