// Sign-in through the interface's own routes: the password form, then whatever
// challenge the server answers with (a new password, a TOTP or SMS code, the choice
// between them, or setting MFA up when the organization requires it).
import * as api from "./api.js";
import * as session from "./session.js";
import { h, field, checkbox, form, fill } from "./dom.js";
import { qrImage } from "./qr.js";

export function signInView(reason, done) {
  const box = h("section", { class: "signin", "aria-labelledby": "signin-title" });
  const org = field("Organization (alias or ID)", { name: "org", autocomplete: "organization" });
  const staff = checkbox("Sign in as staff (the organization is then optional)", { name: "staff" });
  const username = field("User name, e-mail or phone", { name: "username", autocomplete: "username", required: true });
  const password = field("Password", { name: "password", type: "password", autocomplete: "current-password", required: true });
  const signIn = form({ class: "stack", id: "sign-in" },
    [org.el, staff.el, username.el, password.el, h("div", { class: "actions" }, h("button", { type: "submit" }, "Sign in"))],
    async () => {
      const result = await session.signIn({
        org: org.input.value.trim(), username: username.input.value.trim(),
        password: password.input.value, staff: staff.input.checked,
      });
      step(result);
    });
  function step(result) {
    if (result.done) return done();
    fill(box, h("h1", { id: "signin-title" }, "Sign in"), challengeView(result.challenge, step));
    box.querySelector("input")?.focus();
  }
  fill(box, h("h1", { id: "signin-title" }, "Sign in to edge"),
    reason ? h("p", { class: "muted", id: "signed-out-reason" }, reason) : null, signIn);
  return box;
}

function challengeView(challenge, step) {
  const kind = challenge.challenge;
  const message = h("p", { id: "challenge-message" }, challenge.message || kind);
  if (kind === "NEW_PASSWORD_REQUIRED") {
    const pw = field("New password", { name: "new_password", type: "password", autocomplete: "new-password", required: true });
    return answerForm(challenge, message, [pw.el], () => ({ new_password: pw.input.value }), step);
  }
  if (kind === "SOFTWARE_TOKEN_MFA" || kind === "SMS_MFA") {
    const label = kind === "SMS_MFA" ? "Code from the text message" : "Code from your authenticator";
    const code = field(label, { name: "mfa_code", inputmode: "numeric", autocomplete: "one-time-code", required: true });
    return answerForm(challenge, message, [code.el], () => ({ mfa_code: code.input.value.trim() }), step);
  }
  if (kind === "SELECT_MFA_TYPE") {
    const choice = field("Second factor", { type: "select", name: "mfa_choice", options: [["software", "Authenticator app"], ["sms", "Text message"]] });
    return answerForm(challenge, message, [choice.el], () => ({ mfa_choice: choice.input.value }), step);
  }
  if (kind === "MFA_SETUP") return mfaSetup(challenge, message, step);
  return h("p", { class: "error" }, `This console cannot answer ${kind}.`);
}

function answerForm(challenge, message, fields, values, step) {
  return form({ class: "stack", id: "challenge", "data-challenge": challenge.challenge },
    [message, ...fields, h("div", { class: "actions" }, h("button", { type: "submit" }, "Continue"))],
    async () => step(await session.answer(challenge, values())));
}

/** The organization requires MFA: enroll an authenticator with the challenge's session. */
function mfaSetup(challenge, message, step) {
  const box = h("div", { id: "mfa-setup", "data-challenge": "MFA_SETUP" }, message, h("p", {}, "Loading the secret…"));
  api.call("GET", "/v2/auth/mfa/secret-code", { bearer: challenge.session }).then((secret) => {
    const code = field("Code from your authenticator", { name: "mfa_code", inputmode: "numeric", required: true });
    fill(box, message, enrollView(secret), form({ class: "stack", id: "challenge" },
      [code.el, h("div", { class: "actions" }, h("button", { type: "submit" }, "Continue"))],
      async () => {
        const added = await api.call("PUT", "/v2/auth/mfa/software", { form: { mfa_code: code.input.value.trim() }, bearer: challenge.session });
        const next = h("button", { type: "button", id: "recovery-saved" }, "I have kept it: continue");
        next.addEventListener("click", async () => step(await session.answer({ challenge: "MFA_SETUP", session: added.session }, {})));
        fill(box, recoveryView(added.recovery_code), next);
        next.focus();
      }));
  }, (error) => fill(box, h("p", { class: "error" }, error.message)));
  return box;
}

/** The recovery code, shown once: it replaces the authenticator if that is lost. */
export function recoveryView(code) {
  return h("div", {}, h("p", {}, "Keep this recovery code somewhere safe; it is shown only once:"),
    h("p", {}, h("code", { id: "recovery-code" }, code)));
}

/** The QR code of an otpauth URI, and the secret as text for typing it in. */
export function enrollView(secret) {
  return h("div", {},
    h("p", {}, "Scan this code with an authenticator app, or type the secret in."),
    qrImage(secret.uri, "QR code of the authenticator secret"),
    h("p", {}, "Secret: ", h("code", { id: "mfa-secret" }, secret.secret_code)));
}
