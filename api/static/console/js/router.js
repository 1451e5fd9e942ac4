// The one router: pages register themselves (pages/index.js imports each), the nav shows
// those the signed-in person may use, and `#/name/arg` opens one. A page is
// {name, title, visible(me), render(me, args, life)}; `life` (life.js) ends when the page
// is left or dropped, and whatever the page keeps running is tied to it.
import { h, fill } from "./dom.js";
import { PageLife } from "./life.js";

const pages = [];

export function register(page) {
  pages.push(page);
}

export function visiblePages(me) {
  return pages.filter((page) => page.visible(me));
}

/** Where `#/name/a/b` points: the page's name and its arguments (decoded). A hash that
 * does not decode (a bad percent-escape, typed or in a link) points to the overview:
 * decodeURIComponent throws on it, and a throw here would stop the console. */
export function current() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  try {
    const decoded = parts.map(decodeURIComponent);
    return { name: decoded[0] || "overview", args: decoded.slice(1) };
  } catch {
    return { name: "overview", args: [] };
  }
}

export function go(name, ...args) {
  const target = `#/${[name, ...args].map(encodeURIComponent).join("/")}`;
  if (location.hash === target) show();
  else location.hash = target;
}

export function link(text, name, ...args) {
  return h("a", { href: `#/${[name, ...args].map(encodeURIComponent).join("/")}` }, text);
}

let session = null;
let showing = 0;  // the number of the latest show(): a page that ends loading later is dropped
let life = null;  // the lifetime of the page shown, or loading, last

/** Start routing for this person; settles when the first page is shown, and fails (for
 * the caller to sign out) if the console cannot show one. */
export async function start(me) {
  session = me;
  renderNav();
  await show();
}

export function stop() {
  session = null;
  showing++;  // a page still loading is not shown over the sign-in form
  endLife();
  fill(document.getElementById("nav"));
}

window.addEventListener("hashchange", () => { if (session) show(); });

function renderNav() {
  const { name } = current();
  fill(document.getElementById("nav"), visiblePages(session).map((page) =>
    h("a", { href: `#/${page.name}`, "aria-current": page.name === name ? "page" : false }, page.title)));
}

async function show() {
  const mine = ++showing;
  const own = nextLife();
  const { name, args } = current();
  const page = visiblePages(session).find((p) => p.name === name) || visiblePages(session)[0];
  const main = document.getElementById("main");
  main.dataset.ready = "";
  performance.mark(`start:${page.name}`);
  renderNav();
  document.title = `${page.title} · edge console`;
  fill(main, h("h1", {}, page.title), h("p", { class: "muted" }, "Loading…"));
  try {
    const body = await page.render(session, args, own);
    if (mine !== showing) return dropped(main);  // the person moved on or signed out meanwhile
    fill(main, h("h1", {}, page.heading ? page.heading(args) : page.title), body);
    own.shown();
    await shown(body);
  } catch (error) {
    if (mine !== showing) return dropped(main);
    fill(main, h("h1", {}, page.title), h("p", { class: "error", role: "alert" }, error.message));
  }
  if (mine !== showing) return dropped(main);
  main.dataset.page = page.name;
  main.dataset.shown = String(Number(main.dataset.shown || 0) + 1);  // each view, counted
  main.dataset.ready = "1";
  // How long the page took to show, beside the document's Navigation Timing entry.
  performance.measure(`page:${page.name}`, `start:${page.name}`);
}

/** The previous page's life ended (it is left, or dropped while loading), a new one begun. */
function nextLife() {
  endLife();
  life = new PageLife();
  return life;
}

function endLife() {
  life?.end();
  life = null;
}

/** A page that ended loading after a later show() or the sign-out: not shown, counted. */
function dropped(main) {
  main.dataset.dropped = String(Number(main.dataset.dropped || 0) + 1);
}

/** Until every list of the page has its first page (each list's `ready`). */
function shown(body) {
  const lists = [body, ...body.querySelectorAll(".list")].filter((el) => el.ready);
  return Promise.all(lists.map((el) => el.ready));
}

/** Show the current page again (after a change). */
export function refresh() {
  if (session) show();
}
