// The IoT scopes editor (admins of the device): a topic filter per row with its publish and
// subscribe rights, rows added and removed, saved with one PATCH of `iot_scopes`. The
// server checks each scope (no `+`, `#` or empty level) and its 400 is shown here.
import * as api from "../api.js";
import { refresh } from "../router.js";
import { h, form, notice } from "../dom.js";

const RIGHTS = [["can_publish", "publish"], ["can_subscribe", "subscribe"]];

export function scopesEditor(device) {
  const body = h("tbody", {});
  const rows = [];
  const addRow = (scope, rights) => {
    const n = rows.length;
    const input = h("input", { type: "text", id: `scope-${n}`, value: scope, "aria-label": `Scope ${n + 1}` });
    const boxes = RIGHTS.map(([key, name]) => h("input", { type: "checkbox", id: `scope-${name}-${n}`, checked: rights[key], "aria-label": `${name} under scope ${n + 1}` }));
    const drop = h("button", { type: "button", class: "plain", "aria-label": `Remove scope ${n + 1}` }, "Remove");
    const tr = h("tr", {}, h("td", {}, input), boxes.map((b) => h("td", {}, b)), h("td", {}, drop));
    const row = { input, boxes, tr };
    drop.addEventListener("click", () => { rows.splice(rows.indexOf(row), 1); tr.remove(); });
    rows.push(row);
    body.append(tr);
  };
  for (const [scope, rights] of Object.entries(device.iot_scopes || {})) addRow(scope, rights);
  const add = h("button", { type: "button", class: "plain", id: "add-scope" }, "Add a scope");
  add.addEventListener("click", () => { addRow("/", {}); rows[rows.length - 1].input.focus(); });
  const value = () => Object.fromEntries(rows.filter((r) => r.input.value.trim()).map((r) =>
    [r.input.value.trim(), Object.fromEntries(RIGHTS.map(([key], i) => [key, r.boxes[i].checked]))]));
  return form({ id: "scopes-editor" }, [
    h("p", { class: "muted" }, "Topics under the device's root scope it may publish or subscribe to (its own ",
      h("code", {}, "devices/<id>/"), " topics are always its own)."),
    h("table", { class: "scopes" }, h("caption", { class: "muted" }, "IoT scopes"),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Scope"), RIGHTS.map(([, name]) => h("th", { scope: "col" }, name)), h("th", { scope: "col" }, "Remove"))), body),
    h("div", { class: "actions" }, add, h("button", { type: "submit" }, "Save scopes")),
  ], async () => {
    await api.patch(api.path`/v2/devices/${device.id}`, { iot_scopes: value() });
    notice("Scopes saved");
    refresh();
  });
}
