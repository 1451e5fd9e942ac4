// Groups: the list the caller may read, creating one, a group's members, and the editor
// of one access object (its flags and its data_paths / file_paths, path by path).
import * as api from "../api.js";
import { register, go, link, refresh } from "../router.js";
import { h, field, checkbox, form, notice, fill } from "../dom.js";
import { listView } from "../list.js";

const FLAGS = ["read", "write", "update", "delete"];

register({
  name: "groups",
  title: "Groups",
  heading: (args) => (args[1] ? "Group access" : args[0] ? "Group" : "Groups"),
  visible: (me) => me.inOrg && (me.summary.groups > 0 || me.may("group", "create")),
  render(me, args) {
    if (args[1] === "access") return accessPage(args[0], args[2]);
    return args[0] ? groupPage(me, args[0]) : groupsPage(me);
  },
});

function groupsPage(me) {
  return h("div", {}, me.may("group", "create") ? createGroup() : null, listView({
    path: "/v2/groups", key: "groups", caption: "Groups you may see",
    columns: [["Name", (g) => link(g.name, "groups", g.id)], ["Description", (g) => g.description || ""], ["Project", (g) => g.project_id || "(org)"], ["ID", (g) => h("code", {}, g.id)]],
  }));
}

function createGroup() {
  const name = field("New group's name", { name: "group_name", required: true });
  return form({ class: "row", id: "create-group" }, [name.el, h("button", { type: "submit" }, "Create group")], async () => {
    const { group } = await api.post("/v2/groups", { name: name.input.value.trim() });
    notice("Group created");
    go("groups", group.id);
  });
}

function manages(me, groupId) {
  return me.isOrgAdmin || me.isProjectAdmin || me.groups.some((g) => g.group_id === groupId && g.is_admin);
}

async function groupPage(me, id) {
  const { group } = await api.get(api.path`/v2/groups/${id}`);
  const admin = manages(me, id);
  return h("div", { id: "group-page", "data-group": id },
    h("p", {}, h("strong", {}, group.name), group.description ? ` — ${group.description}` : "", " ", h("code", {}, group.id)),
    admin ? grantForm(id) : null,
    h("h2", {}, "Members"),
    listView({
      path: "/v2/users", key: "users", caption: "Users with access to this group", params: { group_id: id },
      columns: [["User", (u) => u.username || u.email || u.id], ["E-mail", (u) => u.email || ""],
        ["Access", (u) => (admin ? link("Edit access", "groups", id, "access", u.id) : "")]],
    }));
}

function grantForm(groupId) {
  const grantee = field("Grant access to (user, device or role ID)", { name: "grantee_id", required: true });
  return form({ class: "row", id: "grant-access" }, [grantee.el, h("button", { type: "submit" }, "Grant access")], async () => {
    const id = grantee.input.value.trim();
    await api.post(api.path`/v2/groups/${groupId}/access/${id}`, {});
    go("groups", groupId, "access", id);
  });
}

async function accessPage(groupId, granteeId) {
  const path = api.path`/v2/groups/${groupId}/access/${granteeId}`;
  const { group_access: access } = await api.get(path);
  const admin = checkbox("Group admin", { name: "is_admin", checked: access.is_admin });
  const read = checkbox("Read the group", { name: "can_read", checked: access.can_read });
  const update = checkbox("Update the group", { name: "can_update", checked: access.can_update });
  const data = pathsEditor("Data paths", "data", access.data_paths || {});
  const files = pathsEditor("File paths", "files", access.file_paths || {});
  const remove = h("button", { type: "button", class: "danger", id: "remove-access" }, "Remove this access");
  remove.addEventListener("click", async () => { await api.del(path); notice("Access removed"); go("groups", groupId); });
  return h("div", {},
    h("p", {}, "Access of ", h("code", {}, granteeId), " to group ", link(groupId, "groups", groupId)),
    form({ id: "access-editor" }, [h("fieldset", {}, h("legend", {}, "Rights"), admin.el, read.el, update.el), data.el, files.el,
      h("div", { class: "actions" }, h("button", { type: "submit" }, "Save access"), remove)], async () => {
      await api.patch(path, { is_admin: admin.input.checked, can_read: read.input.checked, can_update: update.input.checked, data_paths: data.value(), file_paths: files.value() });
      notice("Access saved");
      refresh();
    }));
}

/** A table of paths, each with its four flags; rows can be added and removed. */
function pathsEditor(title, prefix, paths) {
  const body = h("tbody", {});
  const rows = [];
  const addRow = (path, flags) => {
    const n = rows.length;
    const input = h("input", { type: "text", id: `${prefix}-path-${n}`, value: path, "aria-label": `${title}: path ${n + 1}` });
    const boxes = FLAGS.map((f) => h("input", { type: "checkbox", id: `${prefix}-${f}-${n}`, checked: flags[`can_${f}`], "aria-label": `${f} under ${path || "this path"}` }));
    const drop = h("button", { type: "button", class: "plain", "aria-label": `Remove path ${n + 1}` }, "Remove");
    const tr = h("tr", {}, h("td", {}, input), boxes.map((b) => h("td", {}, b)), h("td", {}, drop));
    const row = { input, boxes, tr };
    drop.addEventListener("click", () => { rows.splice(rows.indexOf(row), 1); tr.remove(); });
    rows.push(row);
    body.append(tr);
  };
  for (const [path, flags] of Object.entries(paths)) addRow(path, flags);
  const add = h("button", { type: "button", class: "plain", id: `${prefix}-add-path` }, `Add a ${title.toLowerCase().replace(/s$/, "")}`);
  add.addEventListener("click", () => { addRow("/", {}); rows[rows.length - 1].input.focus(); });
  const el = h("fieldset", { class: "paths" }, h("legend", {}, title),
    h("table", {}, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Path"), FLAGS.map((f) => h("th", { scope: "col" }, f)), h("th", { scope: "col" }, "Remove"))), body), add);
  const value = () => Object.fromEntries(rows.filter((r) => r.input.value.trim()).map((r) =>
    [r.input.value.trim(), Object.fromEntries(FLAGS.map((f, i) => [`can_${f}`, r.boxes[i].checked]))]));
  return { el, value };
}
