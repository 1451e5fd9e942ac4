// The audit log (docs/audit.md), for org admins and staff (GET /v2/audit answers others
// 403): events newest first, paged on the server, filtered by action, actor, target and
// time range with the list's own filters, each actor and target named beside its ID;
// and "Export CSV" of every event the filter matches (audit_csv.js), not only the page.
import { register } from "../router.js";
import { h, fill, field, notice } from "../dom.js";
import { listView } from "../list.js";
import { allEvents, toCsv, fileName, download } from "./audit_csv.js";
import { when } from "../format.js";

register({
  name: "audit",
  title: "Audit log",
  visible: (me) => me.isStaff || me.isOrgAdmin,
  render: (me) => auditPage(me.isStaff && !me.inOrg),
});

// The form's fields and the list filter each one sets (names: starting with what is typed)
const FILTERS = [
  ["action", "Action", "action"],
  ["actor", "Actor name", "actor_name_sw"],
  ["actor_id", "Actor ID", "actor_id"],
  ["target", "Target name", "target_name_sw"],
  ["target_id", "Target ID", "target_id"],
  ["from", "From (UTC day)", "created_date_gte", "date"],
  ["to", "To (UTC day, included)", "created_date_lte", "date"],
];
const ORG_FILTER = ["org", "Organization ID", "org_id"];  // staff without a scope read every org's

function auditPage(site) {
  const filters = site ? [...FILTERS, ORG_FILTER] : FILTERS;
  const inputs = filters.map(([name, label, , type]) => field(label, { name, id: `audit-${name}`, type: type || "text" }));
  const holder = h("div", {});
  const progress = h("span", { class: "muted", id: "export-progress", "aria-live": "polite" });
  const exporter = h("button", { type: "button", id: "export-csv", class: "plain" }, "Export CSV");
  const chosen = () => Object.fromEntries(filters.map(([, , param], i) => [param, inputs[i].input.value.trim()]).filter(([, v]) => v));
  const show = () => fill(holder, eventsList(chosen(), site));
  const form = h("form", { class: "row", role: "search", "aria-label": "Filter the audit log", id: "audit-filters" },
    inputs.map((f) => f.el), h("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", (event) => { event.preventDefault(); show(); });
  exporter.addEventListener("click", async () => {
    exporter.disabled = true;
    try {
      const filter = chosen();
      const events = await allEvents(filter, (n) => { progress.textContent = `${n} events read…`; });
      download(fileName(filter.created_date_gte, filter.created_date_lte), toCsv(events));
      progress.textContent = `${events.length} events exported`;
    } catch (error) {
      progress.textContent = "";
      notice(error.message);
    } finally {
      exporter.disabled = false;
    }
  });
  show();
  return h("div", {}, form, h("div", { class: "actions" }, exporter, progress), holder);
}

/** The events of `filter`; `site`: every organization's (with a column naming each). */
function eventsList(filter, site) {
  return listView({
    path: "/v2/audit", key: "audit_events", caption: "Audit events, newest first", search: false,
    params: { ...filter, desc: "true" },
    columns: [
      ["Time", (e) => h("span", { class: "nowrap" }, when(e.created_date))],
      ["Action", (e) => e.action],
      ["Actor", (e) => named(e.actor_name, e.actor_kind, e.actor_id)],
      ["Target", (e) => named(e.target_name, e.target_kind, e.target_id)],
      ["Client", (e) => e.client || ""],
      ...(site ? [["Organization", (e) => (e.org_id ? h("code", {}, e.org_id) : "the site")]] : []),
      ["Details", (e) => (e.details && Object.keys(e.details).length ? h("code", {}, JSON.stringify(e.details)) : "")],
    ],
  });
}

function named(name, kind, id) {
  return h("span", {}, name || "", kind ? h("span", { class: "muted" }, ` ${kind}`) : "", id ? [" ", h("code", {}, id)] : "");
}
