// A device's tunnels (docs/tunnels.md), for its admins: open one (its services and minutes)
// and show, once, its client token and the exact `edge tunnel connect` line to run on the
// technician's machine (the token in EDGE_TUNNEL_TOKEN, never on the command line); the
// open tunnels, each to close.
import * as api from "../api.js";
import { h, field, fill, form, notice, table } from "../dom.js";
import { secretsView, doneButton } from "./device_secrets.js";
import { when } from "../format.js";

const FIRST_PORT = 2222;

export function tunnelsView(device) {
  const base = api.path`/v2/devices/${device.id}/tunnels`;
  const shown = h("div", { id: "tunnel-once" });
  const open = h("div", { id: "open-tunnels" });
  const reload = () => loadOpen(base, open);
  const el = h("div", { id: "tunnels", class: "list" }, openForm(base, shown, reload), shown, open);
  el.ready = reload();
  return el;
}

function openForm(base, shown, reload) {
  const services = field("Services (comma-separated names the device's agent offers)", { name: "tunnel_services", value: "SSH", required: true });
  const minutes = field("Open for (minutes, 1 to 720)", { name: "tunnel_timeout", type: "number", min: 1, max: 720, value: 60 });
  return form({ class: "stack", id: "open-tunnel" }, [services.el, minutes.el, h("div", { class: "actions" }, h("button", { type: "submit" }, "Open a tunnel"))], async () => {
    const names = services.input.value.split(",").map((s) => s.trim()).filter(Boolean);
    const { tunnel } = await api.post(base, { services: names, timeout: Number(minutes.input.value) || 60 });
    const panel = secretsView("The tunnel's client token and how to connect", [
      ["Client access token", tunnel.client_access_token, "once-tunnel-token"],
      ...names.map((name, i) => [`Connect to ${name}`, connectLine(tunnel, name, FIRST_PORT + i), `tunnel-line-${i}`]),
    ], h("p", { class: "muted" }, "Run the line on the technician's machine, then connect to the port it listens on",
      ` (for SSH: ssh -p ${FIRST_PORT} <user>@127.0.0.1). Add --ca ca.pem when the server's certificate is the site's own.`));
    panel.append(doneButton(panel));
    fill(shown, panel);
    panel.focus();
    notice("Tunnel opened");
    await reload();
  });
}

/** The command line of `edge tunnel connect` for one service, the token in its variable. */
export function connectLine(tunnel, service, port) {
  return `EDGE_TUNNEL_TOKEN=${tunnel.client_access_token} edge tunnel connect --server ${location.origin}`
    + ` --tunnel ${tunnel.uuid} --service ${service} --listen 127.0.0.1:${port}`;
}

async function loadOpen(base, where) {
  try {
    const { tunnels } = await api.get(base);
    if (!tunnels.length) return fill(where, h("p", { class: "muted" }, "No tunnel is open."));
    fill(where, table("Open tunnels", [
      ["Tunnel", (t) => h("code", {}, t.uuid)], ["Services", (t) => (t.services || []).join(", ")],
      ["Until", (t) => when(t.expires_date)], ["Close", (t) => closeButton(base, t, () => loadOpen(base, where))],
    ], tunnels));
  } catch (error) {
    fill(where, h("p", { class: "error" }, error.message));
  }
}

function closeButton(base, tunnel, reload) {
  const close = h("button", { type: "button", class: "plain", "aria-label": `Close tunnel ${tunnel.uuid}` }, "Close");
  close.addEventListener("click", async () => {
    try { await api.del(`${base}/${encodeURIComponent(tunnel.uuid)}`); notice("Tunnel closed"); } catch (error) { notice(error.message); }
    await reload();
  });
  return close;
}
