// A QR code as an image (a data: URL, which the CSP allows for images), drawn by the
// vendored qrcode-generator (vendor/qrcode-generator-2.0.4, MIT).
import qrcode from "../vendor/qrcode-generator-2.0.4/qrcode.mjs";
import { h } from "./dom.js";

export function qrImage(text, alt) {
  const code = qrcode(0, "M");
  code.addData(text);
  code.make();
  return h("img", { class: "qr", src: code.createDataURL(4, 4), alt });
}
