// The audit log as a CSV file (RFC 4180: every cell quoted, quotes doubled, CRLF between
// rows), for a spreadsheet: a cell that begins with = + - @ (or a tab or carriage
// return) is prefixed with ' so that no spreadsheet runs it as a formula (CSV injection:
// actor and target names, and details, are typed by people). UTF-8 with a byte order
// mark, which spreadsheets need to read it as UTF-8.
import * as api from "../api.js";

export const COLUMNS = ["created_date", "action", "actor_kind", "actor_id", "actor_name", "target_kind",
  "target_id", "target_name", "org_id", "client", "request_id", "details", "id"];
const PAGE = 1000;  // the most GET /v2/audit gives a page

/** Every event matching `filters`, oldest first, read a page of 1,000 at a time with the
 * list's own `last_evaluated_key` (the same route, so the same permission check). */
export async function allEvents(filters, onPage = () => {}) {
  const events = [];
  let after;
  do {
    const reply = await api.get("/v2/audit", { ...filters, limit: PAGE, last_evaluated_key: after });
    events.push(...(reply.audit_events || []));
    onPage(events.length);
    after = reply.last_evaluated_key ? JSON.stringify(reply.last_evaluated_key) : undefined;
  } while (after);
  return events;
}

export function toCsv(events) {
  const rows = [COLUMNS, ...events.map((e) => COLUMNS.map((c) => text(e[c])))];
  return `\ufeff${rows.map((row) => row.map(cell).join(",")).join("\r\n")}\r\n`;
}

function text(value) {
  if (value === undefined || value === null) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

export function cell(value) {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return `"${safe.replace(/"/g, '""')}"`;
}

/** The file's name: the time range of the filter (its start, or "start"; its end, or now). */
export function fileName(from, to, now = new Date()) {
  const end = to || now.toISOString().slice(0, 16).replace(":", "-");
  return `audit_${from || "start"}_to_${end}.csv`;
}

/** Hand the text to the browser as a download (a blob: URL, revoked once clicked). */
export function download(name, csv) {
  const url = URL.createObjectURL(new Blob([csv], { type: "text/csv;charset=utf-8" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
