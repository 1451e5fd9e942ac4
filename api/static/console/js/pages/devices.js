// Devices: the list the caller may read (paged, searched and filtered on the server, with
// each row's online dot kept live from the live-changes stream), creating a device (its
// API key, key pair and certificate shown once, and its provisioning bundle), and the
// device's own page (device_page.js).
import * as api from "../api.js";
import { register, link } from "../router.js";
import { h, field, form, fill, notice, yesNo } from "../dom.js";
import { listView } from "../list.js";
import { onlineDot, markOnline, watchLive } from "./device_live.js";
import { creatableIn } from "./device_standing.js";
import { secretsView, bundleButton } from "./device_secrets.js";
import { devicePage } from "./device_page.js";
import { when } from "../format.js";
import { projectNamer } from "./device_format.js";

register({
  name: "devices",
  title: "Devices",
  heading: (args) => (args[0] ? "Device" : "Devices"),
  visible: (me) => me.inOrg && (me.summary.devices > 0 || creatableIn(me).any),
  render: (me, args, life) => (args[0] ? devicePage(me, args[0], life) : devicesPage(me, life)),
});

function devicesPage(me, life) {
  const where = creatableIn(me);
  const projectName = projectNamer();
  const page = h("div", { id: "devices-page" });
  const list = listView({
    path: "/v2/devices", key: "devices", caption: "Devices you may see",
    filters: [{ name: "is_online", label: "Online", options: [["", "All"], ["true", "Online now"], ["false", "Offline"]] }],
    columns: [
      ["Name", (d) => link(d.name || d.username || d.id, "devices", d.id)],
      ["Online now", (d) => onlineDot(d)],
      ["Last seen", (d) => when(d.last_seen)],
      ["Project", (d) => projectName(d.project_id)],
      ["Suspended", (d) => ("is_active" in d ? yesNo(!d.is_active) : "")],
    ],
  });
  watchLive(life, page, {
    kinds: "presence",
    onEvent: ({ event, data }) => {
      if (event === "presence") markOnline(page, data.device_id, data.online);
      if (event === "reload") readOnlineAgain(page);  // changes were missed
    },
  });
  return fill(page, where.any ? createDevice(page, where) : null, list);
}

/** Each device shown, its presence read again (after a `reload`: changes were missed). */
function readOnlineAgain(page) {
  const shown = new Set([...page.querySelectorAll("[data-online-of]")].map((el) => el.dataset.onlineOf));
  for (const id of shown) {
    api.get(api.path`/v2/devices/${id}`).then(({ device }) => markOnline(page, id, Boolean(device.is_online)), () => {});
  }
}

function createDevice(page, where) {
  const name = field("New device's name", { name: "device_name", required: true });
  const options = [...(where.orgLevel ? [["", "The organization (no project)"]] : []), ...where.projects.map((p) => [p.id, p.name])];
  const project = field("Home project", { type: "select", name: "project_id", options });
  return h("details", { id: "create-device-box" }, h("summary", {}, "Create a device"),
    form({ class: "stack", id: "create-device" }, [name.el, project.el, h("div", { class: "actions" }, h("button", { type: "submit" }, "Create device"))], async () => {
      const body = { name: name.input.value.trim() };
      if (project.input.value) body.project_id = project.input.value;
      const { device } = await api.post("/v2/devices", body);
      notice(`Created ${body.name}`);
      fill(page, createdView(device, body.name));
      page.querySelector("#once-only")?.focus({ preventScroll: true });
    }));
}

/** The new device's secrets, shown this once, then on to its page. */
function createdView(device, name) {
  const open = h("a", { href: `#/devices/${encodeURIComponent(device.id)}`, class: "button", id: "open-new-device" }, "I have kept them: open the device");
  return secretsView(`${name}: its credentials`, [
    ["API key", device.api_key, "once-api-key"],
    ["Certificate", device.certificate, "once-certificate"],
    ["Private key", device.private_key, "once-private-key"],
  ], h("p", {}, "Device ID ", h("code", { id: "new-device-id" }, device.id), ", broker ", h("code", {}, device.broker),
    ", root scope ", h("code", {}, device.root_scope), ", CA ", h("a", { href: device.root_ca }, "root-ca.pem")),
  bundleButton(device.id), h("div", { class: "actions" }, open));
}
