// One device's page: its fields (online kept live), the actions the caller may take
// (device_standing.js decides which: reset key or certificate, suspend, delete, the
// bundle), its IoT scopes, its twin, its commands, its tunnels and its jobs.
import * as api from "../api.js";
import { go, refresh } from "../router.js";
import { h, fill, notice, table, yesNo } from "../dom.js";
import { towardsDevice, groupsHolding } from "./device_standing.js";
import { onlineDot, markOnline, watchLive } from "./device_live.js";
import { secretsView, doneButton, bundleButton } from "./device_secrets.js";
import { scopesEditor } from "./device_scopes.js";
import { twinView } from "./device_twin.js";
import { commandsView } from "./device_commands.js";
import { tunnelsView } from "./device_tunnels.js";
import { jobsView } from "./device_jobs.js";
import { when } from "../format.js";
import { projectNamer } from "./device_format.js";

export async function devicePage(me, id, life) {
  const { device } = await api.get(api.path`/v2/devices/${id}`);
  const may = towardsDevice(me, device, await groupsHolding(me, device));
  const twin = await twinView(device, may);
  const page = h("div", { id: "device-page", "data-device": device.id },
    h("p", {}, h("strong", { id: "device-name" }, device.name || device.username || device.id), " ", h("code", {}, device.id)),
    may.update || may.delete || may.suspend ? actions(device, may) : h("p", { class: "muted", id: "read-only" }, "You may only read this device."),
    h("div", { class: "device-top" },
      h("section", { "aria-labelledby": "fields-title" }, h("h2", { id: "fields-title" }, "Fields"),
        table("The device's fields", [["Field", ([k]) => k], ["Value", ([, v]) => v]], fieldRows(device))),
      h("section", { "aria-labelledby": "twin-title" }, h("h2", { id: "twin-title" }, "Twin"), twin.el)),
    may.scopes ? [h("h2", {}, "IoT scopes"), scopesEditor(device)] : null,
    may.update ? [h("h2", {}, "Commands"), commandsView(device)] : null,
    may.tunnels ? [h("h2", {}, "Tunnels"), tunnelsView(device)] : null,
    h("h2", {}, "Jobs"), jobsView(device));
  watchLive(life, page, {
    kinds: "presence,twins",
    deviceId: device.id,
    onEvent: ({ event, data }) => {
      if (event === "presence") markOnline(page, data.device_id, data.online);
      if (event === "twins") twin.changed(data.version);
      if (event === "reload") {  // changes were missed: the twin and presence read again
        twin.changed();
        api.get(api.path`/v2/devices/${device.id}`).then((r) => markOnline(page, device.id, Boolean(r.device.is_online)), () => {});
      }
    },
  });
  return page;
}

function fieldRows(device) {
  const rows = [
    ["Online now", onlineDot(device)],
    ["Last seen", when(device.last_seen)],
    ["Connected since", device.connected_since ? when(device.connected_since) : ""],
    ["Last disconnect", device.last_disconnect_reason || ""],
    ["Project", projectNamer()(device.project_id)],
  ];
  if ("is_active" in device) rows.push(["Suspended", h("span", { id: "device-suspended" }, yesNo(!device.is_active))]);
  const plain = ["owner_id", "manufacturer", "product", "site", "serial_number", "mac_address", "locale", "zoneinfo"];
  for (const name of plain) if (device[name]) rows.push([name, String(device[name])]);
  if (device.tags?.length) rows.push(["tags", device.tags.join(", ")]);
  rows.push(["Delete protected", yesNo(device.is_delete_protected)]);
  for (const name of ["api_key_last_changed", "mqtt_credentials_last_changed", "created_date"]) {
    if (device[name]) rows.push([name, when(device[name])]);
  }
  return rows;
}

/** The buttons `may` allows, and where their once-only answers are shown. */
function actions(device, may) {
  const path = api.path`/v2/devices/${device.id}`;
  const shown = h("div", { id: "device-secrets" });
  const button = (text, id, run, cls) => {
    const b = h("button", { type: "button", id, class: cls }, text);
    b.addEventListener("click", async () => {
      b.disabled = true;
      try { await run(); } catch (error) { notice(error.message); } finally { b.disabled = false; }
    });
    return b;
  };
  const resetKey = async () => {
    const { api_key: key } = await api.post(`${path}/reset-api-key`, {});
    showOnce(shown, "A new API key (the old one stopped working)", [["API key", key, "once-api-key"]]);
  };
  const resetCertificate = async () => {
    const made = await api.post(`${path}/reset-mqtt-credentials`, {});
    showOnce(shown, "A new certificate (the old one is refused from now on)", [
      ["Certificate", made.certificate, "once-certificate"], ["Private key", made.private_key, "once-private-key"]]);
  };
  const suspend = async (active) => {
    await api.patch(path, { is_active: active });
    notice(active ? "Device reactivated" : "Device suspended");
    refresh();
  };
  return h("div", {},
    h("div", { class: "actions", id: "device-actions" },
      may.update ? button("Reset API key", "reset-key", resetKey, "plain") : null,
      may.update ? button("Reset certificate", "reset-certificate", resetCertificate, "plain") : null,
      may.suspend && device.is_active ? button("Suspend", "suspend-device", () => suspend(false), "danger") : null,
      may.suspend && !device.is_active ? button("Reactivate", "reactivate-device", () => suspend(true)) : null,
      may.delete ? deleteButton(device, path) : null),
    may.bundle ? bundleButton(device.id) : null,
    shown);
}

function showOnce(where, title, items) {
  const panel = secretsView(title, items);
  panel.append(doneButton(panel));
  fill(where, panel);
  panel.focus();
}

/** Delete in two steps: the first click asks, the second deletes (to the trash). */
function deleteButton(device, path) {
  const ask = h("button", { type: "button", class: "danger", id: "delete-device" }, "Delete device");
  const box = h("span", { class: "confirm" }, ask);
  ask.addEventListener("click", () => {
    const sure = h("button", { type: "button", class: "danger", id: "confirm-delete" }, `Yes, delete ${device.name || device.id}`);
    const keep = h("button", { type: "button", class: "plain", id: "keep-device" }, "Keep it");
    sure.addEventListener("click", async () => {
      try {
        await api.del(path);
        notice("Device deleted (it is in the trash)");
        go("devices");
      } catch (error) { notice(error.message); }
    });
    keep.addEventListener("click", () => fill(box, ask));
    fill(box, sure, keep);
    sure.focus();
  });
  return box;
}
