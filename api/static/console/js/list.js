// The one list component: a search box and filters, a table, and paging on the server
// with the interface's `last_evaluated_key` (Next) and a stack of earlier keys (Previous).
// Every list of the console is one of these; nothing is loaded beyond one page.
import * as api from "./api.js";
import { h, fill, table } from "./dom.js";

/** A paged list of `path` (the body's list under `key`), with `columns` as in dom.table.
 * `filters`: [{name, label, options: [[value, text]]}]; `params`: fixed query params;
 * `search: false` for a route that refuses `search` (a 400: the audit log, executions,
 * commands), which then shows no search box. The section names its route (`data-path`). */
export function listView({ path, key, columns, caption, params = {}, filters = [], search = true, limit = 25 }) {
  const state = { query: {}, keys: [], next: null };
  const body = h("div", {});
  const pager = h("div", { class: "pager" });
  const count = h("span", { class: "muted", "aria-live": "polite" });
  // The server takes at most 256 characters of search (and 16 words): the box takes no more.
  const searchBox = search ? h("input", { type: "search", id: `${key}-search`, name: "search", maxlength: 256 }) : null;
  const chosen = filters.map((f) => h("select", { id: `${key}-${f.name}`, name: f.name },
    f.options.map(([value, text]) => h("option", { value }, text))));
  const controls = h("form", { class: "row", role: "search", "aria-label": `Search ${caption}` },
    searchBox && h("div", {}, h("label", { for: searchBox.id }, "Search"), searchBox),
    filters.map((f, i) => h("div", {}, h("label", { for: chosen[i].id }, f.label), chosen[i])),
    h("button", { type: "submit" }, "Search"));
  controls.addEventListener("submit", (event) => {
    event.preventDefault();
    state.query = {};
    if (searchBox && searchBox.value.trim()) state.query.search = searchBox.value.trim();
    filters.forEach((f, i) => { if (chosen[i].value) state.query[f.name] = chosen[i].value; });
    state.keys = [];
    load(null);
  });

  async function load(after) {
    const query = { limit, ...params, ...state.query, last_evaluated_key: after || undefined };
    const reply = await api.get(path, query);
    state.next = reply.last_evaluated_key ? JSON.stringify(reply.last_evaluated_key) : null;
    fill(body, table(caption, columns, reply[key] || []));
    if (!after) await countAll();
    renderPager(after);
    el.dataset.loads = String(Number(el.dataset.loads || 0) + 1);  // each page shown, counted
  }

  async function countAll() {
    try {
      const reply = await api.get(path, { ...params, ...state.query, object_count: "true" });
      count.textContent = `${reply.object_count} in all`;
    } catch { count.textContent = ""; }
  }

  function renderPager(after) {
    const previous = h("button", { type: "button", class: "plain", disabled: state.keys.length === 0 }, "Previous page");
    const next = h("button", { type: "button", class: "plain", disabled: !state.next }, "Next page");
    previous.addEventListener("click", () => load(state.keys.pop() || null));
    next.addEventListener("click", () => { state.keys.push(after); load(state.next); });
    fill(pager, previous, next, count);
  }

  const asks = search || filters.length;  // with nothing to choose, no Search button
  const el = h("section", { class: "list", "data-path": path }, asks ? controls : null, body, pager);
  el.ready = load(null).catch((error) => fill(body, h("p", { class: "error", role: "alert" }, error.message)));
  return el;
}
