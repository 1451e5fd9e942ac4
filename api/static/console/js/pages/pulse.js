// Pulse: the site's last hour from its one-minute samples (GET /v2/pulse), one chart per
// series drawn with uPlot (pinned, vendored), and the same figures as a table for screen
// readers and for copying. Staff see the site's totals, or one organization's counts
// (`#/pulse/<org id>`); org admins see their own organization's, without disk free (the
// server leaves it out). The page reads the pulse again each minute while it is shown.
import uPlot from "../../vendor/uplot-1.6.32/uPlot.esm.js";
import * as api from "../api.js";
import { register, go } from "../router.js";
import { h, fill, field, table } from "../dom.js";

const REFRESH_MS = 60_000;
const GIB = 1024 ** 3;
// Each chart: its title, the axis label, the sample's value, how a value reads.
const SERIES = [
  { key: "requests", title: "Requests per second", axis: "requests/s", value: (s) => s.requests_per_second, text: (v) => v.toFixed(2) },
  { key: "mqtt", title: "MQTT messages per second", axis: "messages/s", value: (s) => s.mqtt_messages_per_second, text: (v) => v.toFixed(2) },
  { key: "failures", title: "Sign-in failures per minute", axis: "failures", value: (s) => s.sign_in_failures, text: String },
  { key: "online", title: "Devices online", axis: "devices", value: (s) => s.devices_online, text: String },
  { key: "disk", title: "Disk free", axis: "GiB free", value: (s) => (s.disk_free_bytes == null ? null : s.disk_free_bytes / GIB), text: (v) => `${v.toFixed(2)} GiB`, staffOnly: true },
];

register({
  name: "pulse",
  title: "Pulse",
  visible: (me) => me.isStaff || me.isOrgAdmin,
  async render(me, args, life) {
    stylesheet();
    const orgId = me.isStaff ? args[0] : undefined;
    const pulse = (await api.get("/v2/pulse", { org_id: orgId })).pulse;
    const shown = SERIES.filter((s) => !s.staffOnly || me.isStaff);
    const root = h("div", { class: "pulse" },
      me.isStaff ? await orgChoice(orgId) : null,
      h("p", { class: "muted", id: "pulse-scope" }, scopeText(pulse)));
    const charts = h("div", { class: "charts" });
    const figures = h("div", {});
    root.append(charts, h("details", { id: "pulse-table" }, h("summary", {}, "The figures as a table"), figures));
    const view = { charts: [], shown, chartsEl: charts, figures };
    root.ready = new Promise((resolve) => requestAnimationFrame(() => { draw(view, pulse); resolve(); }));
    keepFresh(life, view, orgId);
    return root;
  },
});

/** uPlot's own stylesheet, once (the CSP allows styles from this origin only). */
function stylesheet() {
  if (document.getElementById("uplot-css")) return;
  document.head.append(h("link", { id: "uplot-css", rel: "stylesheet", href: "/console/vendor/uplot-1.6.32/uPlot.min.css" }));
}

async function orgChoice(orgId) {
  const { orgs } = await api.get("/v2/orgs", { limit: 100 });
  const options = [["", "The whole site"], ...orgs.map((o) => [o.id, o.name])];
  const choice = field("Organization", { type: "select", name: "org", options, id: "pulse-org" });
  choice.input.value = orgId || "";
  choice.input.addEventListener("change", () => (choice.input.value ? go("pulse", choice.input.value) : go("pulse")));
  return h("div", { class: "row" }, choice.el);
}

function scopeText(pulse) {
  const whose = pulse.org_id ? "this organization's counts" : "the whole site";
  return `The last hour of ${whose}, one sample a minute (kept ${pulse.retention_hours} h). Gaps are times the server was not running.`;
}

/** The charts and the table for these samples (again on each refresh). */
function draw(view, pulse) {
  const samples = pulse.samples;
  if (!samples.length) {
    fill(view.chartsEl, h("p", { id: "pulse-empty" }, "No samples yet: the server writes one each minute."));
    fill(view.figures);
    return;
  }
  const data = columns(samples, view.shown);
  if (view.charts.length) view.charts.forEach((plot, i) => plot.setData([data.x, data.y[i]]));
  else {
    fill(view.chartsEl);
    view.charts = view.shown.map((series, i) => chart(view.chartsEl, series, data.x, data.y[i]));
  }
  fill(view.figures, figureTable(samples, view.shown));
  view.chartsEl.dataset.samples = String(samples.length);  // what the charts hold, for tests
  view.chartsEl.dataset.newest = samples[samples.length - 1].end;
}

/** uPlot's columns: times in seconds; before a sample that follows a gap, a point with no
 * value, so the line breaks there instead of bridging the time the server was down. */
function columns(samples, shown) {
  const x = [];
  const y = shown.map(() => []);
  for (const sample of samples) {
    if (sample.after_gap) {
      x.push(Date.parse(sample.start) / 1000);
      y.forEach((values) => values.push(null));
    }
    x.push(Date.parse(sample.end) / 1000);
    shown.forEach((series, i) => y[i].push(series.value(sample)));
  }
  return { x, y };
}

function chart(into, series, x, y) {
  const holder = h("div", { class: "plot", role: "img", "aria-label": `${series.title}, the last hour: the figures are in the table below` });
  const figure = h("figure", { "data-series": series.key }, h("figcaption", {}, series.title), holder);
  into.append(figure);
  const width = Math.max(300, holder.clientWidth || 600);  // its cell of the grid
  return figure.plot = new uPlot({
    width, height: 180, legend: { show: false }, cursor: { show: true },
    scales: { x: { time: true }, y: { range: (u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] } },
    series: [{ label: "Time" }, { label: series.axis, stroke: "#0b5cad", width: 2, fill: "rgba(11, 92, 173, 0.08)", spanGaps: false }],
    axes: [{ label: "Time", stroke: "#3b434b" }, { label: series.axis, stroke: "#3b434b", size: 60 }],
  }, [x, y], holder);
}

function figureTable(samples, shown) {
  const rows = [...samples].reverse();  // the newest first
  const columns = [["Minute ending", (s) => time(s)], ...shown.map((series) => [series.title, (s) => reading(series, s)])];
  return table("One row per sample, the newest first", columns, rows);
}

function time(sample) {
  const end = new Date(sample.end).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit" });
  return sample.after_gap ? `${end} (after a gap)` : end;
}

function reading(series, sample) {
  const value = series.value(sample);
  return value == null ? "not known" : series.text(value);
}

/** Each minute while the page lives; stops once it is left (or dropped). */
function keepFresh(life, view, orgId) {
  life.every(REFRESH_MS, async () => {
    try {
      draw(view, (await api.get("/v2/pulse", { org_id: orgId })).pulse);
    } catch { /* the next minute tries again; a 401 signs out through the client */ }
  });
}
