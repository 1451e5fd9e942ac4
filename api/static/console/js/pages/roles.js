// Roles: the list the caller may read, creating one, and a role's rights.
import * as api from "../api.js";
import { register, go, link } from "../router.js";
import { h, field, form, notice, table, yesNo } from "../dom.js";
import { listView } from "../list.js";

register({
  name: "roles",
  title: "Roles",
  heading: (args) => (args[0] ? "Role" : "Roles"),
  visible: (me) => me.inOrg && (me.summary.roles > 0 || me.may("role", "create")),
  render: (me, args) => (args[0] ? rolePage(args[0]) : rolesPage(me)),
});

function rolesPage(me) {
  return h("div", {}, me.may("role", "create") ? createRole() : null, listView({
    path: "/v2/roles", key: "roles", caption: "Roles you may see",
    columns: [["Name", (r) => link(r.name, "roles", r.id)], ["Description", (r) => r.description || ""], ["Org admin", (r) => yesNo(r.is_org_admin)], ["ID", (r) => h("code", {}, r.id)]],
  }));
}

function createRole() {
  const name = field("New role's name", { name: "role_name", required: true });
  return form({ class: "row", id: "create-role" }, [name.el, h("button", { type: "submit" }, "Create role")], async () => {
    const { role } = await api.post("/v2/roles", { name: name.input.value.trim() });
    notice("Role created");
    go("roles", role.id);
  });
}

async function rolePage(id) {
  const { role } = await api.get(api.path`/v2/roles/${id}`);
  const org = role.org_permissions || {};
  const rows = Object.entries(org).filter(([k]) => k.endsWith("_permissions")).map(([k, crud]) =>
    [k.replace("_permissions", "s"), ["create", "read", "update", "delete"].filter((a) => crud[`can_${a}`]).join(", ") || "none"]);
  return h("div", { id: "role-page" },
    h("p", {}, h("strong", {}, role.name), role.description ? ` — ${role.description}` : "", " ", h("code", {}, role.id)),
    table("Organization rights of the role", [["On", ([k]) => k], ["Rights", ([, v]) => v]], [["org admin", yesNo(role.is_org_admin)], ...rows]));
}
