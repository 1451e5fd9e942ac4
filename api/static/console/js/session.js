// Who is signed in and what they may do, decided from the interface's own answers:
// the token's claims (kind, org), the session's permissions, and the caller's access
// objects. The console hides what the person may not do; the server decides every call.
// And the idle sign-out: after the configured minutes without input, the token is
// revoked and forgotten. At every sign-out (manual, idle, forced by the server or a failed
// sign-in) what pages keep in the tab for the person (an upload to resume) is wiped too.
import * as api from "./api.js";

export let me = null;
let currentToken = "";
let idleTimer = null;
let signedOut = () => {};
const wipes = [];

const EVENTS = ["keydown", "pointerdown", "wheel", "touchstart"];

/** Sign in with a password: a token (done), or a challenge to answer. */
export async function signIn({ org, username, password, staff }) {
  const form = { grant_type: "password", username, password };
  if (staff) form.scope = org;
  else form.client_id = org;
  return settle(await api.call("POST", "/v2/auth/token", { form }));
}

/** Answer a challenge (`session` is its session, `answer` its form fields). */
export async function answer(challenge, fields) {
  const form = { challenge: challenge.challenge, ...fields };
  return settle(await api.call("POST", "/v2/auth/challenge", { form, bearer: challenge.session }));
}

async function settle(reply) {
  if (!reply.access_token) return { challenge: reply };
  api.setToken(reply.access_token);
  currentToken = reply.access_token;
  try {
    await load();
  } catch (error) {  // a token issued but never used: revoked, not left behind
    await forget();
    throw error;
  }
  startIdle();
  return { done: true };
}

/** Read who the caller is and what they hold (again after a change to their access). */
export async function load() {
  const claims = JSON.parse(atob(api.hasToken() ? tokenPart() : "e30="));
  const session = await api.get("/v2/account/access/current-session");
  const staff = claims.knd === "staff";
  const [projects, groups] = staff || !claims.org ? [[], []] : await Promise.all([
    api.get("/v2/account/access/projects").then((r) => r.project_access || []),
    api.get("/v2/account/access/groups").then((r) => r.group_access || []),
  ]);
  const summary = (await api.get("/v2/summary")).summary;
  me = new Caller(claims, session.org_permissions || {}, projects, groups, summary);
  return me;
}

function tokenPart() {
  const part = currentToken.split(".")[1] || "e30";
  return part.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(part.length / 4) * 4, "=");
}

class Caller {
  constructor(claims, org, projects, groups, summary) {
    this.id = claims.sub;
    this.kind = claims.knd;
    this.orgId = claims.org || null;
    this.org = org;
    this.projects = projects;
    this.groups = groups;
    this.summary = summary;
  }
  get isStaff() { return this.kind === "staff"; }
  get inOrg() { return this.orgId !== null; }
  get isOrgAdmin() { return this.isStaff ? this.inOrg : Boolean(this.org.is_admin); }
  get isProjectAdmin() { return this.projects.some((p) => p.is_admin); }
  get isGroupAdmin() { return this.groups.some((g) => g.is_admin); }
  /** Whether any access lets the caller do `action` to `kind` (users, groups, roles...):
   * creating takes org or project access (a group's access creates nothing); the rest
   * may come from group access too. The server decides each call all the same. */
  may(kind, action) {
    if (this.isOrgAdmin) return true;
    const key = `${kind}_permissions`;
    const groups = action === "create" || kind === "group" ? [] : this.groups;
    const held = [this.org, ...this.projects, ...groups];
    return held.some((a) => (a.is_admin && kind !== "project") || (a[key] && a[key][`can_${action}`]));
  }
  get title() {
    if (this.isStaff) return this.inOrg ? "staff (in an organization)" : "staff";
    if (this.isOrgAdmin) return "org admin";
    if (this.isProjectAdmin) return "project admin";
    if (this.isGroupAdmin) return "group admin";
    return "user";
  }
}

/** Revoke the token and forget it, then tell the page. */
export async function signOut(reason) {
  stopIdle();
  await forget();
  signedOut(reason);
}

/** Revoke the token (if any) and forget who was signed in. */
async function forget() {
  if (currentToken) {  // as an explicit bearer: a 401 here (revoked already) is no news
    try { await api.call("PUT", "/v2/auth/token/revoke", { bearer: currentToken }); } catch { /* gone already */ }
  }
  dropCaller();
}

/** Forget the token and the person, and wipe what pages kept in the tab for them. */
function dropCaller() {
  api.setToken(null);
  currentToken = "";
  me = null;
  for (const wipe of wipes) wipe();
}

/** Run `wipe` at every sign-out: a page's traces of the person (in sessionStorage) must
 * not pass to whoever signs in next in the same tab. */
export function atSignOut(wipe) {
  wipes.push(wipe);
}

export function onSignedOut(callback) {
  signedOut = callback;
  api.whenSignedOut((reason) => { stopIdle(); dropCaller(); callback(reason); });
}

function idleMinutes() {
  const meta = document.querySelector('meta[name="edge-idle-minutes"]');
  return Number(meta?.content) || 15;
}

function startIdle() {
  stopIdle();
  for (const name of EVENTS) window.addEventListener(name, restartIdle, { passive: true });
  restartIdle();
}

function restartIdle() {
  clearTimeout(idleTimer);
  const minutes = idleMinutes();
  idleTimer = setTimeout(() => signOut(`Signed out after ${minutes} minutes without input.`), minutes * 60000);
}

function stopIdle() {
  clearTimeout(idleTimer);
  for (const name of EVENTS) window.removeEventListener(name, restartIdle);
}
