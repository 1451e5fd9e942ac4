// Users: the list the caller may read, creating one (the server invites them by e-mail
// with a temporary password), and one user's page: suspend or reactivate, reset MFA, send
// an account-recovery e-mail (a link to set a password), and the access they hold in the
// org and their home project.
import * as api from "../api.js";
import { register, go, link, refresh } from "../router.js";
import { h, field, form, notice, table, yesNo } from "../dom.js";
import { listView } from "../list.js";
import { towardsUser } from "../standing.js";

register({
  name: "users",
  title: "Users",
  heading: (args) => (args[0] ? "User" : "Users"),
  visible: (me) => me.inOrg && (me.summary.users > 0 || me.may("user", "create")),
  render: (me, args) => (args[0] ? userPage(me, args[0]) : usersPage(me)),
});

function usersPage(me) {
  return h("div", {}, me.may("user", "create") ? createUser() : null, listView({
    path: "/v2/users", key: "users", caption: "Users you may see",
    filters: [{ name: "is_active", label: "Status", options: [["", "All"], ["true", "Active"], ["false", "Suspended"]] }],
    columns: [
      ["User name", (u) => link(u.username || u.email || u.id, "users", u.id)],
      ["E-mail", (u) => u.email || ""],
      ["Name", (u) => [u.first_name, u.last_name].filter(Boolean).join(" ")],
      ["Active", (u) => (u.is_active === false ? "suspended" : "yes")],
      ["MFA", (u) => yesNo(u.mfa_enabled)],
    ],
  }));
}

function createUser() {
  const email = field("E-mail", { name: "email", type: "email", required: true });
  const username = field("User name", { name: "username" });
  const told = h("p", { class: "muted" }, "The new user is invited by e-mail, with a temporary password to replace at the first sign-in.");
  return h("details", {}, h("summary", {}, "Create a user"),
    form({ class: "stack", id: "create-user" }, [told, email.el, username.el, h("div", { class: "actions" }, h("button", { type: "submit" }, "Create and invite"))], async () => {
      const body = { email: email.input.value.trim() };
      if (username.input.value.trim()) body.username = username.input.value.trim();
      const { user } = await api.post("/v2/users", body);  // no password: the server invites
      notice(`Created and invited ${body.email}`);
      go("users", user.id);
    }));
}

async function userPage(me, id) {
  const { user } = await api.get(api.path`/v2/users/${id}`);
  const may = towardsUser(me, user);
  return h("div", { id: "user-page", "data-user": user.id },
    table("Profile", [["Field", ([k]) => k], ["Value", ([, v]) => v]], profileRows(user)),
    may.admin ? actions(user, may) : h("p", { class: "muted" }, may.self ? "This is you: see Account." : "You may only read this user."),
    h("h2", {}, "Access"), accessOf(user));
}

function profileRows(user) {
  const names = ["username", "email", "first_name", "last_name", "phone_number", "is_active", "mfa_enabled", "software_mfa_enabled", "sms_mfa_enabled", "has_temporary_password", "created_date", "id"];
  return names.filter((n) => n in user).map((n) => [n, typeof user[n] === "boolean" ? yesNo(user[n]) : String(user[n])]);
}

/** The actions `may` (standing.js) allows on this user. */
function actions(user, may) {
  const path = api.path`/v2/users/${user.id}`;
  const button = (text, id, run, cls) => {
    const b = h("button", { type: "button", id, class: cls }, text);
    b.addEventListener("click", async () => {
      try { await run(); notice(`${text}: done`); refresh(); } catch (error) { notice(error.message); }
    });
    return b;
  };
  const suspend = user.is_active === false
    ? button("Reactivate", "reactivate", () => api.patch(path, { is_active: true }))
    : button("Suspend", "suspend", () => api.patch(path, { is_active: false }), "danger");
  return h("div", { class: "actions" },
    may.suspend ? suspend : null,
    may.resetMfa && user.software_mfa_enabled ? button("Reset authenticator MFA", "reset-software-mfa", () => api.del(`${path}/mfa/software`)) : null,
    may.resetMfa && user.sms_mfa_enabled ? button("Reset SMS MFA", "reset-sms-mfa", () => api.del(`${path}/mfa/sms`)) : null,
    may.recover ? button("Send a recovery e-mail", "recovery", () => api.post(`${path}/recovery`, {}), "plain") : null);
}

function accessOf(user) {
  const blocks = [["Organization", user.org_permissions], ["Home project", user.project_permissions]].filter(([, p]) => p);
  if (user.is_org_admin) return h("p", { id: "access-summary" }, "Org admin: every right in the organization.");
  if (!blocks.length) return h("p", { class: "muted" }, "No access you may see.");
  return table("Access held", [["Where", ([w]) => w], ["Rights", ([, p]) => rights(p)]], blocks);
}

function rights(p) {
  const out = [];
  if (p.is_admin) out.push("admin");
  if (p.can_read) out.push("read");
  if (p.can_update) out.push("update");
  for (const [key, crud] of Object.entries(p)) {
    if (!key.endsWith("_permissions")) continue;
    const held = ["create", "read", "update", "delete"].filter((a) => crud[`can_${a}`]);
    if (held.length) out.push(`${key.replace("_permissions", "s")}: ${held.join(", ")}`);
  }
  return out.join("; ") || "none";
}
