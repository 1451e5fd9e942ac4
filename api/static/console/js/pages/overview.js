// Overview: the health of each part, and counts within the caller's rights
// (GET /v2/summary counts what the caller's own lists would).
import * as api from "../api.js";
import { register } from "../router.js";
import { h, table } from "../dom.js";
import { bytes } from "../format.js";

const NAMES = {
  orgs: "Organizations", projects: "Projects", users: "Users", groups: "Groups", roles: "Roles",
  devices: "Devices", devices_online: "Devices online", data_entries: "Data entries",
  files: "Files", file_bytes: "File bytes", open_tunnels: "Open tunnels",
};

register({
  name: "overview",
  title: "Overview",
  visible: () => true,
  async render() {
    const [summary, health] = await Promise.all([api.get("/v2/summary"), api.get("/v2/health")]);
    const cards = Object.entries(summary.summary).map(([name, value]) =>
      h("div", { class: "card", "data-count": name },
        h("div", { class: "figure" }, name === "file_bytes" ? bytes(value) : value.toLocaleString("en")),
        h("div", { class: "name" }, NAMES[name] || name)));
    const parts = Object.entries(health).filter(([, v]) => typeof v === "string" && v !== health.checked);
    return h("div", {},
      h("h2", {}, "What you may see"), h("div", { class: "cards", id: "counts" }, cards),
      h("h2", {}, "Health"),
      table(`Checked ${health.checked || ""}`, [["Part", ([name]) => name], ["State", ([, state]) => h("span", { class: state === "ok" ? "ok" : "error" }, state)]], parts));
  },
});
