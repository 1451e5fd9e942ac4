// Data: a group's JSON entries as a tree by path (folders opened lazily, from pages of the
// interface's path listing), creating an entry, and one entry's editor (data_editor.js).
// `#/data` picks a group, `#/data/<group>` is its tree, `#/data/<group>/entry/<path>` one entry.
import * as api from "../api.js";
import { register, go } from "../router.js";
import { h, field, form, notice } from "../dom.js";
import { holdsGroups, groupPicker, groupOf, rightsIn, childrenPage, urlPath, plainArgs, plainPath } from "./data_common.js";
import { parseJson } from "../format.js";
import { entryPage } from "./data_editor.js";

register({
  name: "data",
  title: "Data",
  heading: (args) => (args[1] === "entry" ? "Data entry" : args[0] ? "Group data" : "Data"),
  visible: (me) => holdsGroups(me, "data_paths"),
  render(me, args) {
    if (!args[0]) return h("div", {}, h("p", {}, "Choose a group to see its data."), groupPicker(me, "data", "data_paths"));
    plainArgs(args);
    if (args[1] === "entry") return entryPage(me, args[0], `/${args.slice(2).join("/")}`);
    return groupData(me, args[0]);
  },
});

async function groupData(me, groupId) {
  const group = await groupOf(me, groupId);
  const rights = rightsIn(me, group, "data_paths");
  const route = api.path`/v2/groups/${groupId}/data`;
  const tree = h("ul", { class: "tree", id: "data-tree", "aria-label": `Data of ${group.name}` });
  const body = h("div", { id: "data-page", "data-group": groupId },
    h("p", {}, "Group ", h("strong", {}, group.name), " ", h("code", {}, groupId)),
    rights.anywhere("write") ? createEntry(groupId) : null,
    h("h2", {}, "Entries by path"), tree);
  body.ready = openFolder(tree, route, groupId, "/", null);
  return body;
}

/** Show one page of a folder's children in `list` (after `after`), with "More" when the
 * listing has more pages. */
async function openFolder(list, route, groupId, folder, after) {
  const { names, next } = await childrenPage(route, folder, after);
  list.querySelector(":scope > li.more")?.remove();
  if (!after && names.length === 0) list.append(h("li", { class: "muted" }, "No entries here."));
  for (const [name, leaf, isFolder] of names) {
    const path = `${folder === "/" ? "" : folder}/${name}`;
    if (list.querySelector(`:scope > li[data-path="${CSS.escape(path)}"]`)) continue;  // seen on an earlier page
    list.append(node(route, groupId, path, name, leaf, isFolder));
  }
  if (next) {
    const more = h("button", { type: "button", class: "plain" }, `More in ${folder}`);
    more.addEventListener("click", () => openFolder(list, route, groupId, folder, next));
    list.append(h("li", { class: "more" }, more));
  }
}

function node(route, groupId, path, name, leaf, isFolder) {
  const item = h("li", { "data-path": path });
  if (isFolder) {
    const children = h("ul", { class: "tree", hidden: true });
    const toggle = h("button", { type: "button", class: "plain folder", "aria-expanded": "false" }, `${name}/`);
    let loaded = null;
    toggle.addEventListener("click", async () => {
      const open = toggle.getAttribute("aria-expanded") !== "true";
      toggle.setAttribute("aria-expanded", String(open));
      children.hidden = !open;
      loaded = loaded || openFolder(children, route, groupId, path, null)
        .catch((error) => children.append(h("li", { class: "error", role: "alert" }, error.message)))
        .then(() => { item.dataset.loaded = "1"; });
      await loaded;
    });
    item.append(toggle);
    if (leaf) item.append(" ", entryLink(groupId, path, "(entry)"));
    item.append(children);
  } else {
    item.append(entryLink(groupId, path, name));
  }
  return item;
}

function entryLink(groupId, path, text) {
  return h("a", { class: "entry", href: `#/data/${encodeURIComponent(groupId)}/entry/${urlPath(path)}` }, text);
}

function createEntry(groupId) {
  const path = field("New entry's path", { name: "entry_path", required: true, placeholder: "/sensors/t4" });
  const value = h("textarea", { id: "new-entry-value", name: "entry_value", rows: 3, cols: 40 }, "{}");
  return form({ class: "row", id: "create-entry" }, [path.el,
    h("div", {}, h("label", { for: value.id }, "Value (JSON)"), value),
    h("button", { type: "submit" }, "Create entry")], async () => {
    const where = plainPath(`/${path.input.value.trim().replace(/^\/+/, "")}`);
    await api.post(`${api.path`/v2/groups/${groupId}/data`}/${urlPath(where)}`, { value: parseJson(value.value, "The value") });
    notice("Entry created");
    go("data", groupId, "entry", ...where.split("/").filter(Boolean));
  });
}
