// What the Data and Files pages share (part "store"): choosing a group, what the caller
// may do at a path of it (from their access objects' data_paths / file_paths, as the
// server decides: docs/permissions.md), the children of a folder from pages of the
// interface's path listing, and a delete button that asks twice. files.js uses it too.
import * as api from "../api.js";
import { h, notice, table } from "../dom.js";
import { listView } from "../list.js";
import { link } from "../router.js";

const NONE = Object.freeze({ read: false, write: false, update: false, delete: false });
const ALL = Object.freeze({ read: true, write: true, update: true, delete: true });

/** The group access objects (the caller's, and their roles') that hold grants under
 * `key` ("data_paths" or "file_paths") or make the caller the group's admin. */
function holdings(me, key) {
  return me.groups.filter((g) => g.is_admin || Object.keys(g[key] || {}).length > 0);
}

/** Whether the page is for this caller: one of an organization who administers groups
 * (org, project or group admins) or holds some grant under `key` in a group. */
export function holdsGroups(me, key) {
  return me.inOrg && (me.isOrgAdmin || me.isProjectAdmin || holdings(me, key).length > 0);
}

/** The groups to choose from, each a link to the page `name` of that group: for org and
 * project admins the groups they may list (paged on the server); for others the groups
 * of their own grants under `key` (a person holds few access objects). */
export function groupPicker(me, name, key) {
  const columns = [["Group", (g) => link(g.name, name, g.id)], ["Description", (g) => g.description || ""], ["ID", (g) => h("code", {}, g.id)]];
  if (me.isOrgAdmin || me.isProjectAdmin) return listView({ path: "/v2/groups", key: "groups", caption: "Groups you may see", columns });
  const mine = new Map(holdings(me, key).map((g) => [g.group_id, { id: g.group_id, name: g.group_name, description: g.group_description }]));
  return table("Groups you hold access to", columns, [...mine.values()]);
}

/** The group as the caller may read it; as their access object names it when they may
 * not read the group itself (its data or files may still be theirs, by their grants). */
export async function groupOf(me, id) {
  try {
    return (await api.get(api.path`/v2/groups/${id}`)).group;
  } catch (error) {
    const held = me.groups.find((g) => g.group_id === id);
    if (!held || ![403, 404].includes(error.status)) throw error;
    return { id, name: held.group_name };
  }
}

/** What `me` may do at a path of `group`, from the grants under `key` ("data_paths" or
 * "file_paths"): admins over the group may do everything; otherwise, in each access
 * object the longest grant path covering the path (whole segments) decides, and any
 * access object's grant counts. The server decides each call all the same. */
export function rightsIn(me, group, key) {
  const admin = me.isOrgAdmin || me.groups.some((g) => g.group_id === group.id && g.is_admin)
    || me.projects.some((p) => p.is_admin && group.project_id && p.project_id === group.project_id);
  const held = me.groups.filter((g) => g.group_id === group.id).map((g) => g[key] || {});
  const at = (path) => {
    if (admin) return ALL;
    const found = held.map((grants) => longest(grants, path)).filter(Boolean);
    return Object.freeze(Object.fromEntries(Object.keys(NONE).map((r) => [r, found.some((f) => Boolean(f[`can_${r}`]))])));
  };
  const anywhere = (right) => admin || held.some((grants) => Object.values(grants).some((f) => f[`can_${right}`]));
  return { at, anywhere };
}

function longest(grants, path) {
  let best = null;
  for (const [grant, flags] of Object.entries(grants)) {
    const base = grant === "/" ? "" : grant.replace(/\/$/, "");
    if ((path === base || path.startsWith(`${base}/`) || base === "") && (best === null || base.length > best[0].length)) best = [base, flags];
  }
  return best && best[1];
}

/** The arguments of a Data or Files address (`#/data/<group>/...`), refused when one of
 * their segments is empty, "." or "..": the browser resolves dot segments in a request's
 * URL (encoded or not), so the page would act on another group or path than it shows. */
export function plainArgs(args) {
  const bad = (segment) => segment === "" || segment === "." || segment === "..";
  for (const arg of args) if (arg.split("/").some(bad)) throw new Error(`"${arg}" in the address names no group, folder or entry.`);
  return args;
}

/** A path typed by the person, refused when a segment of it is "." or ".." (as above). */
export function plainPath(path) {
  if (path.split("/").some((segment) => segment === "." || segment === "..")) throw new Error(`"${path}" is not a path: no part of it may be "." or "..".`);
  return path;
}

/** A path of a group, for a URL: each segment percent-encoded, '/' kept. */
export function urlPath(path) {
  return path.split("/").filter(Boolean).map(encodeURIComponent).join("/");
}

/** One page of the folder's children: the paths below `folder` (paths_only, cascade) read
 * from `after`, folded into the names right below it. Answers {names: [[name, isLeaf,
 * isFolder]], next} (next: the key of the following page, or null). */
export async function childrenPage(route, folder, after, limit = 100) {
  const query = { cascade: "true", paths_only: "true", limit, last_evaluated_key: after || undefined };
  const reply = await api.get(`${route}/${urlPath(folder)}`, query);
  const base = folder === "/" ? "" : folder;
  const names = new Map();
  for (const path of reply.paths || []) {
    if (!path.startsWith(`${base}/`)) continue;  // the folder's own entry
    const rest = path.slice(base.length + 1);
    const [name, ...deeper] = rest.split("/");
    const seen = names.get(name) || [name, false, false];
    if (deeper.length) seen[2] = true;
    else seen[1] = true;
    names.set(name, seen);
  }
  return { names: [...names.values()], next: reply.last_evaluated_key ? JSON.stringify(reply.last_evaluated_key) : null };
}

/** A button that acts on its second click ("Delete", then "Really delete?"); what goes
 * wrong is shown as a notice. */
export function twoStep(text, attrs, action) {
  const button = h("button", { type: "button", class: "danger", ...attrs }, text);
  button.addEventListener("click", async () => {
    if (button.dataset.armed !== "1") {
      button.dataset.armed = "1";
      button.textContent = `Really ${text.toLowerCase()}?`;
      return;
    }
    button.disabled = true;
    try {
      await action();
    } catch (error) {
      notice(error.message);
    } finally {
      button.disabled = false;
    }
  });
  return button;
}
