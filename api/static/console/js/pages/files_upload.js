// Uploading a file with a progress bar. Up to MULTIPART_BYTES it is one request (the
// interface's single-part presigned URL); above, the interface's multipart upload, in
// parts of PART_BYTES, each PUT to its own presigned URL. The upload's ID, its part URLs
// and the parts done are kept in sessionStorage (this tab only, gone when it closes) under
// the signed-in person's ID and the file's group, path, size and date, so after a failed
// part or a dropped connection "Resume" (or the same person choosing the same file again,
// even after signing in again) goes on from the first missing part. Every sign-out wipes
// them, and an upload stops at its next part when its person signed out: nobody resumes
// (and completes under their own name) another person's upload. The bytes go with
// XMLHttpRequest, whose upload reports progress.
//
// An upload belongs to its page (life.js): leaving the page (another page, a sign-out)
// stops it at once, its request aborted, so nothing goes on unseen and no later "done"
// reloads a page nobody sees; the parts already sent stay kept, and choosing the same file
// again goes on from there. Closing or reloading the tab while an upload runs asks first.
import * as api from "../api.js";
import * as session from "../session.js";
import { h, notice } from "../dom.js";
import { urlPath } from "./data_common.js";
import { bytes } from "../format.js";

const KEPT = "edge-upload:";  // the prefix of every upload kept in sessionStorage

session.atSignOut(() => {
  for (const key of Object.keys(sessionStorage)) if (key.startsWith(KEPT)) sessionStorage.removeItem(key);
});

export const MULTIPART_BYTES = 8 * 1024 * 1024;  // files larger than this go in parts
export const PART_BYTES = 8 * 1024 * 1024;  // the interface asks at least 5 MiB a part

/** The upload form of a folder: `route` is the group's files route, `done` runs after an
 * upload, `life` is the page's lifetime (an upload stops when it ends). */
export function uploadForm(route, folder, done, life) {
  const input = h("input", { type: "file", id: "upload-file", name: "file" });
  const start = h("button", { type: "submit" }, "Upload");
  const resume = h("button", { type: "button", id: "upload-resume", hidden: true }, "Resume upload");
  const bar = h("progress", { id: "upload-progress", max: 1, value: 0 });
  const status = h("p", { id: "upload-status", class: "muted", "aria-live": "polite" });
  const error = h("p", { class: "error", role: "alert", id: "upload-error" });
  const box = h("div", { class: "upload", hidden: true }, h("label", { for: bar.id }, "Upload progress"), bar, status);
  let file = null;
  const run = async () => {
    error.textContent = "";
    resume.hidden = true;
    start.disabled = true;
    box.hidden = false;
    window.addEventListener("beforeunload", askFirst);
    try {
      await upload(route, folder, file, (sent, text) => { bar.max = file.size || 1; bar.value = sent; status.textContent = text; }, life.signal);
      bar.max = 1; bar.value = 1;
      notice(`${file.name} uploaded`);
      done();
    } catch (e) {
      error.textContent = e.message;
      resume.hidden = !e.resumable;
    } finally {
      window.removeEventListener("beforeunload", askFirst);
      start.disabled = false;
    }
  };
  resume.addEventListener("click", run);
  const el = h("form", { id: "upload-form", class: "row" },
    h("div", {}, h("label", { for: input.id }, `Upload a file into ${folder}`), input), start, resume, box, error);
  el.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!input.files.length) { error.textContent = "Choose a file first."; return; }
    file = input.files[0];
    run();
  });
  return el;
}

/** The browser's "leave site?" question: the tab is closing or reloading mid-upload. */
function askFirst(event) {
  event.preventDefault();
  event.returnValue = "";  // what older browsers look for
}

async function upload(route, folder, file, progress, signal) {
  const path = `${folder === "/" ? "" : folder}/${file.name}`;
  const where = `${route}/${urlPath(path)}`;
  const start = { content_type: file.type || undefined };
  if (file.size <= MULTIPART_BYTES) {
    const { url } = await api.call("PUT", where, { json: start });
    await send(url, file, (n) => progress(n, `${bytes(n)} of ${bytes(file.size)}`), signal);
    progress(file.size, `Uploaded ${file.name} (${bytes(file.size)})`);
    return;
  }
  const owner = session.me.id;
  const key = `${KEPT}${owner}:${where}:${file.size}:${file.lastModified}`;
  const stillOwner = () => {
    if (session.me?.id !== owner) throw new Error("You signed out: the upload stopped. Sign in and choose the file again.");
    if (signal.aborted) throw left();
  };
  const count = Math.ceil(file.size / PART_BYTES);
  let saved = JSON.parse(sessionStorage.getItem(key) || "null");
  if (!saved) {
    const reply = await api.call("PUT", where, { json: { ...start, num_parts: count } });
    saved = { upload_id: reply.upload_id, urls: reply.urls, etags: {} };
    sessionStorage.setItem(key, JSON.stringify(saved));
  }
  const done = () => Object.keys(saved.etags).reduce((n, part) => n + partOf(file, Number(part)).size, 0);
  for (let part = 1; part <= count; part++) {
    if (saved.etags[part]) continue;
    stillOwner();
    const before = done();
    const label = `part ${part} of ${count}`;
    progress(before, `${bytes(before)} of ${bytes(file.size)}, ${label}`);
    try {
      saved.etags[part] = await send(saved.urls[part - 1], partOf(file, part), (n) => progress(before + n, `${bytes(before + n)} of ${bytes(file.size)}, ${label}`), signal);
    } catch (e) {
      if (e.left) throw e;
      if (e.status === 403 || e.status === 404) sessionStorage.removeItem(key);  // expired or gone: start again
      else e.resumable = true;
      const failed = new Error(`${label} failed: ${e.message}${e.resumable ? ". Resume goes on from this part." : ". Upload the file again."}`);
      failed.resumable = Boolean(e.resumable);
      throw failed;
    }
    stillOwner();
    sessionStorage.setItem(key, JSON.stringify(saved));
  }
  stillOwner();
  await api.call("PUT", where, { json: { completed_upload_id: saved.upload_id, etag_by_part: saved.etags } });
  sessionStorage.removeItem(key);
  progress(file.size, `Uploaded ${file.name} (${bytes(file.size)}) in ${count} parts`);
}

function partOf(file, part) {
  return file.slice((part - 1) * PART_BYTES, Math.min(part * PART_BYTES, file.size));
}

/** The error of an upload stopped because its page was left (it is kept to resume). */
function left() {
  return Object.assign(new Error("You left the page: the upload stopped. Choose the file again to go on."), { left: true, resumable: true });
}

/** PUT bytes to a presigned URL (no token: the URL carries its signature); its ETag.
 * Aborted when `signal` is (the page was left). */
function send(url, blob, onProgress, signal) {
  return new Promise((resolve, reject) => {
    if (signal.aborted) { reject(left()); return; }
    const xhr = new XMLHttpRequest();
    const stop = () => xhr.abort();
    signal.addEventListener("abort", stop, { once: true });
    xhr.addEventListener("loadend", () => signal.removeEventListener("abort", stop));
    xhr.addEventListener("abort", () => reject(left()));
    xhr.open("PUT", url);
    xhr.upload.addEventListener("progress", (event) => onProgress(event.loaded));
    xhr.addEventListener("load", () => {
      if (xhr.status === 200) { resolve(xhr.getResponseHeader("ETag")); return; }
      let message = `${xhr.status} ${xhr.statusText}`;
      try { message = JSON.parse(xhr.responseText).message || message; } catch { /* not JSON */ }
      reject(Object.assign(new Error(message), { status: xhr.status }));
    });
    xhr.addEventListener("error", () => reject(Object.assign(new Error("the connection dropped"), { status: 0 })));
    xhr.send(blob);
  });
}
