// One data entry: its JSON value in an editor (checked as JSON before it is sent), its
// index fields, saved (or deleted) with the ETag it was read with (If-Match, docs/data.md
// "Conditional writes": the revision and which incarnation of the entry, so an entry
// deleted and created again meanwhile is a conflict too): when someone else wrote first
// the server answers 409 and the
// page shows their value beside the person's own, to load theirs or save over it
// knowingly. Nothing is overwritten unseen.
import * as api from "../api.js";
import { go, refresh } from "../router.js";
import { h, form, notice, table } from "../dom.js";
import { parseJson } from "../format.js";
import { groupOf, rightsIn, twoStep, urlPath } from "./data_common.js";

const UNICODE = Array.from({ length: 10 }, (_, i) => `unicode_${i + 1}`);
const NUMBERS = ["number_1", "number_2"];

/** The entry and the ETag its GET answered (the version a conditional write names). */
async function readEntry(where) {
  const response = await api.raw(where, { accept: "application/json" });
  return { entry: (await response.json()).data, etag: response.headers.get("ETag") };
}

export async function entryPage(me, groupId, path) {
  const where = `${api.path`/v2/groups/${groupId}/data`}/${urlPath(path)}`;
  const [group, { entry, etag }] = await Promise.all([groupOf(me, groupId), readEntry(where)]);
  const may = rightsIn(me, group, "data_paths").at(path);
  const saves = may.update && (may.delete || !group.require_delete_permission_to_put_data);
  const state = { etag };
  const text = JSON.stringify(entry.value, null, 2);
  const rows = Math.min(24, Math.max(6, text.split("\n").length + 1));
  const value = h("textarea", { id: "entry-value", name: "value", rows, cols: 80, readonly: !saves, "aria-describedby": "entry-json" }, text);
  const check = h("p", { id: "entry-json", class: "muted", "aria-live": "polite" }, "Valid JSON");
  value.addEventListener("input", () => {
    try { JSON.parse(value.value); check.textContent = "Valid JSON"; check.className = "muted"; }
    catch (error) { check.textContent = `Not JSON: ${error.message}`; check.className = "error"; }
  });
  const index = indexFields(entry, !saves);
  const conflict = h("section", { id: "conflict", class: "conflict", hidden: true, "aria-live": "assertive" });
  const save = async (version) => {
    const body = { value: parseJson(value.value, "The value"), ...index.value() };
    try {
      await api.call("PUT", where, { json: body, headers: { "If-Match": version } });
    } catch (error) {
      if (error.status !== 409) throw error;
      await showConflict(conflict, where, error.message, (theirs) => save(theirs));
      return;
    }
    notice("Entry saved");
    refresh();
  };
  const removeAt = async (version) => {
    try {
      await api.call("DELETE", where, { headers: { "If-Match": version } });
    } catch (error) {
      if (error.status !== 409) throw error;
      await showConflict(conflict, where, error.message, removeAt, "Delete theirs too");
      return;
    }
    notice("Entry deleted");
    go("data", groupId);
  };
  const remove = may.delete ? twoStep("Delete", { id: "delete-entry" }, () => removeAt(state.etag)) : null;
  const link = h("a", { href: `#/data/${encodeURIComponent(groupId)}` }, group.name);
  return h("div", { id: "entry-page", "data-revision": entry.revision },
    h("p", {}, h("code", {}, path), " in ", link, ` — revision ${entry.revision}, last written by `,
      h("code", {}, entry.last_updated_by), ` at ${entry.last_updated_date}`),
    saves ? null : h("p", { class: "muted" }, "You may read this entry, not change it."),
    form({ id: "entry-editor" }, [h("label", { for: value.id }, "Value (JSON)"), value, check, index.el,
      h("div", { class: "actions" }, saves ? h("button", { type: "submit" }, "Save") : null, remove)], () => save(state.etag)),
    conflict);
}

/** Someone wrote first: their value beside the person's, to load theirs (the page again)
 * or do the person's save (or delete) over theirs, at their version. */
async function showConflict(section, where, message, saveOver, overText = "Save mine over theirs") {
  const { entry: theirs, etag } = await readEntry(where);
  const load = h("button", { type: "button", id: "load-theirs" }, "Load their version");
  load.addEventListener("click", () => refresh());
  const over = h("button", { type: "button", class: "danger", id: "save-over" }, overText);
  over.addEventListener("click", () => { section.hidden = true; saveOver(etag).catch((e) => notice(e.message)); });
  section.hidden = false;
  section.replaceChildren(
    h("h2", {}, "Someone changed this entry since you opened it"),
    h("p", { class: "error", role: "alert" }, message),
    h("p", {}, `Revision ${theirs.revision}, written by `, h("code", {}, theirs.last_updated_by), ` at ${theirs.last_updated_date}. Their value:`),
    h("pre", { id: "their-value", tabindex: "0" }, JSON.stringify(theirs.value, null, 2)),
    h("div", { class: "actions" }, load, over));
  load.focus();
}

/** The entry's index fields (unicode_1..10, number_1..2), each an input; an empty one is
 * not sent, so a save clears it (a PUT replaces the index fields). */
function indexFields(entry, readonly) {
  const inputs = [...UNICODE, ...NUMBERS].map((name) => [name, h("input", {
    type: "text", id: `index-${name}`, name, readonly, value: entry[name] === undefined || entry[name] === null ? "" : String(entry[name]),
    "aria-label": name, inputmode: name.startsWith("number") ? "decimal" : undefined,
  })]);
  const el = h("details", { class: "index", open: inputs.some(([name]) => entry[name] !== undefined) },
    h("summary", {}, "Index fields"),
    table("Index fields: text in unicode_N, numbers in number_N", [["Field", ([name]) => h("label", { for: `index-${name}` }, name)], ["Value", ([, input]) => input]], inputs));
  const value = () => Object.fromEntries(inputs.filter(([, input]) => input.value.trim() !== "").map(([name, input]) => {
    if (!name.startsWith("number")) return [name, input.value];
    const number = Number(input.value.trim());
    if (!Number.isFinite(number)) throw new Error(`${name}: must be a number`);
    return [name, number];
  }));
  return { el, value };
}
