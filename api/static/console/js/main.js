// Boot: the sign-in view until a person is signed in, then the router over the pages.
import * as router from "./router.js";
import * as session from "./session.js";
import { h, fill } from "./dom.js";
import { signInView } from "./signin.js";
import "./pages/index.js";

function signedIn() {
  const me = session.me;
  const out = h("button", { type: "button", id: "sign-out" }, "Sign out");
  out.addEventListener("click", () => session.signOut("You signed out."));
  fill(document.getElementById("who"), h("span", { id: "who-am-i" }, me.title), out);
  // Signed in but nothing shown: sign out (revoking the token), saying why.
  router.start(me).catch((error) => session.signOut(`The console failed after signing in: ${error.message}`));
}

function signedOut(reason) {
  router.stop();
  fill(document.getElementById("who"));
  const main = document.getElementById("main");
  fill(main, signInView(reason, signedIn));
  main.dataset.page = "sign-in";
  main.dataset.ready = "1";
  document.title = "Sign in · edge console";
}

session.onSignedOut(signedOut);
signedOut("");
