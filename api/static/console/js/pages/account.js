// Account: the signed-in person's profile, password, MFA enrollment (a QR code of the
// TOTP secret) and their current session (the interface offers no list of sessions).
import * as api from "../api.js";
import { register, refresh } from "../router.js";
import { h, field, form, notice, table, fill, yesNo } from "../dom.js";
import { enrollView, recoveryView } from "../signin.js";
import { signOut } from "../session.js";

register({
  name: "account",
  title: "Account",
  visible: () => true,
  async render(me) {
    const session = await api.get("/v2/account/access/current-session");
    const parts = [];
    if (!me.isStaff) {
      const { user } = await api.get(api.path`/v2/users/${me.id}`);
      parts.push(h("h2", {}, "Profile"), profile(user), h("h2", {}, "Two-factor sign-in"), mfa(user));
    }
    parts.push(h("h2", {}, "Password"), password(), h("h2", {}, "This session"), sessionView(me, session));
    return h("div", { id: "account-page" }, parts);
  },
});

function profile(user) {
  const first = field("First name", { name: "first_name", value: user.first_name || "" });
  const last = field("Last name", { name: "last_name", value: user.last_name || "" });
  return form({ class: "stack", id: "profile" }, [h("p", {}, `${user.username || ""} <${user.email || ""}>`), first.el, last.el,
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Save profile"))], async () => {
    await api.patch(api.path`/v2/users/${user.id}`, { first_name: first.input.value.trim() || null, last_name: last.input.value.trim() || null });
    notice("Profile saved");
  });
}

function password() {
  const old = field("Current password", { name: "old_password", type: "password", autocomplete: "current-password", required: true });
  const fresh = field("New password", { name: "new_password", type: "password", autocomplete: "new-password", required: true });
  return form({ class: "stack", id: "change-password" }, [old.el, fresh.el, h("div", { class: "actions" }, h("button", { type: "submit" }, "Change password"))], async () => {
    await api.call("PUT", "/v2/auth/password", { form: { old_password: old.input.value, new_password: fresh.input.value } });
    // The server ends every session of the account on a password change, this one too.
    await signOut("Your password was changed: sign in with the new one.");
  });
}

function mfa(user) {
  const box = h("div", { id: "mfa" });
  if (user.software_mfa_enabled) {
    const remove = h("button", { type: "button", class: "danger", id: "remove-mfa" }, "Remove the authenticator");
    remove.addEventListener("click", async () => {
      try { await api.call("DELETE", "/v2/auth/mfa/software", { form: {} }); notice("Authenticator removed"); refresh(); } catch (error) { notice(error.message); }
    });
    return fill(box, h("p", {}, "An authenticator app is set up."), remove);
  }
  const start = h("button", { type: "button", id: "enroll-mfa" }, "Set up an authenticator app");
  start.addEventListener("click", async () => {
    const secret = await api.get("/v2/auth/mfa/secret-code");
    const code = field("Code from your authenticator", { name: "mfa_code", inputmode: "numeric", required: true });
    fill(box, enrollView(secret), form({ class: "stack", id: "confirm-mfa" }, [code.el, h("div", { class: "actions" }, h("button", { type: "submit" }, "Confirm"))], async () => {
      const added = await api.call("PUT", "/v2/auth/mfa/software", { form: { mfa_code: code.input.value.trim() } });
      fill(box, h("p", { class: "ok" }, "The authenticator is set up."), recoveryView(added.recovery_code));
    }));
    box.querySelector("input")?.focus();
  });
  return fill(box, h("p", {}, `Two-factor sign-in: ${yesNo(user.mfa_enabled)}.`), start);
}

function sessionView(me, session) {
  const org = session.org_permissions || {};
  return table("Your current session", [["What", ([k]) => k], ["Value", ([, v]) => v]], [
    ["Signed in as", me.title], ["Account ID", me.id], ["Organization", me.orgId || "(none)"],
    ["Org admin", yesNo(org.is_admin)],
  ]);
}
