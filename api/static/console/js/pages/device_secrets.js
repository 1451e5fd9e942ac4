// Secrets the server shows once (a new device's API key, key pair and certificate; a reset
// key or certificate; a tunnel's client token): each with a copy button, under a warning.
// They live in this element alone: nothing keeps them, so leaving the page (or pressing
// "Done") takes them away for good.
import * as api from "../api.js";
import { h, notice } from "../dom.js";

/** The once-only panel: `items` are [label, text, id]; `after` follows the secrets. */
export function secretsView(title, items, ...after) {
  const panel = h("section", { class: "secrets", id: "once-only", tabindex: "-1", "aria-labelledby": "once-only-title" },
    h("h2", { id: "once-only-title" }, title),
    h("p", { class: "warning", role: "alert" }, "Shown this once: copy what you need now. The server keeps no copy",
      " (a key only as its hash, never a private key); once you leave this page they are gone."),
    items.map(([label, text, id]) => secretItem(label, text, id)), after);
  return panel;
}

function secretItem(label, text, id) {
  const copy = h("button", { type: "button", class: "plain copy", "aria-label": `Copy ${label}` }, "Copy");
  copy.addEventListener("click", () => copyText(text, label));
  return h("div", { class: "secret" }, h("div", { class: "secret-head" }, h("strong", { id: `${id}-label` }, label), copy),
    h("pre", { id, "aria-labelledby": `${id}-label` }, text));
}

async function copyText(text, label) {
  try {
    await navigator.clipboard.writeText(text);
    notice(`${label} copied`);
  } catch {
    notice("The browser refused to copy: select the text and copy it by hand.");
  }
}

/** A button that removes the panel it sits in (the secrets with it). */
export function doneButton(panel, text = "Done: I have kept them") {
  const done = h("button", { type: "button", id: "secrets-done" }, text);
  done.addEventListener("click", () => panel.closest(".secrets")?.remove());
  return done;
}

/** Download the device's provisioning bundle (a zip; each download issues a new
 * certificate and key, so the certificate shown before stops working). */
export function bundleButton(deviceId) {
  const button = h("button", { type: "button", class: "plain", id: "download-bundle" }, "Download the provisioning bundle");
  const told = h("p", { class: "muted" }, "The bundle (a zip for MQTT over TLS) holds a new certificate and key each time it",
    " is downloaded: the certificate the device held before stops working.");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const response = await api.raw(api.path`/v2/devices/${deviceId}/bundle`, { accept: "application/zip" });
      const blob = await response.blob();
      const url = URL.createObjectURL(blob);
      const link = h("a", { href: url, download: `device-${deviceId}.zip` });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      button.dataset.downloaded = String(blob.size);
      notice("Bundle downloaded");
    } catch (error) {
      notice(error.message);
    } finally {
      button.disabled = false;
    }
  });
  return h("div", { class: "bundle" }, button, told);
}
