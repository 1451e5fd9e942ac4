// Files: a group's files by folder (pages of the folder's subtree, folded into its files
// and subfolders, "More" for the next page), upload (files_upload.js), download through a
// presigned URL (the token never goes into a URL), delete.
// `#/files` picks a group, `#/files/<group>/<folder path...>` shows one folder.
import * as api from "../api.js";
import { register, link, refresh } from "../router.js";
import { h, notice, fill } from "../dom.js";
import { holdsGroups, groupPicker, groupOf, rightsIn, twoStep, urlPath, plainArgs } from "./data_common.js";
import { bytes } from "../format.js";
import { uploadForm } from "./files_upload.js";

const PAGE = 50;

register({
  name: "files",
  title: "Files",
  heading: (args) => (args[0] ? "Group files" : "Files"),
  visible: (me) => holdsGroups(me, "file_paths"),
  render(me, args, life) {
    if (!args[0]) return h("div", {}, h("p", {}, "Choose a group to see its files."), groupPicker(me, "files", "file_paths"));
    plainArgs(args);
    return folderPage(me, args[0], `/${args.slice(1).join("/")}`, life);
  },
});

async function folderPage(me, groupId, folder, life) {
  const group = await groupOf(me, groupId);
  const rights = rightsIn(me, group, "file_paths");
  const route = api.path`/v2/groups/${groupId}/files`;
  const rows = h("tbody", {});
  const more = h("div", { class: "pager" });
  const body = h("div", { id: "files-page", "data-group": groupId, "data-folder": folder },
    h("p", {}, "Group ", link(group.name, "files", groupId), " ", h("code", {}, groupId)),
    crumbs(groupId, folder),
    rights.at(folder).write ? uploadForm(route, folder, () => reload(), life) : null,
    h("table", { id: "files-table" }, h("caption", { class: "muted" }, `Files in ${folder}`),
      h("thead", {}, h("tr", {}, ["Name", "Size", "Uploaded", "Type", "Actions"].map((c) => h("th", { scope: "col" }, c)))), rows),
    more);
  const seen = new Set();
  const load = async (after) => {
    const query = { cascade: "true", info_only: "true", limit: PAGE, last_evaluated_key: after || undefined };
    const reply = await api.get(`${route}/${urlPath(folder)}`, query);
    for (const file of reply.files || []) {
      const row = fileRow(route, groupId, folder, file, rights, seen);
      if (row) rows.append(row);
    }
    if (!rows.children.length) rows.append(h("tr", {}, h("td", { colspan: 5, class: "muted" }, "No files here.")));
    const next = reply.last_evaluated_key ? JSON.stringify(reply.last_evaluated_key) : null;
    const button = next ? h("button", { type: "button", class: "plain", id: "files-more" }, "More files") : null;
    button?.addEventListener("click", () => load(next));
    fill(more, button);
    body.dataset.loads = String(Number(body.dataset.loads || 0) + 1);
  };
  const reload = () => { rows.replaceChildren(); seen.clear(); return load(null); };  // the form stays as it is
  body.ready = load(null);
  return body;
}

/** A row for a file right in the folder, or for the subfolder a deeper file is in (once). */
function fileRow(route, groupId, folder, file, rights, seen) {
  const base = folder === "/" ? "" : folder;
  if (!file.path.startsWith(`${base}/`)) return null;  // the folder's own path as a file
  const [name, ...deeper] = file.path.slice(base.length + 1).split("/");
  if (deeper.length) {
    if (seen.has(name)) return null;
    seen.add(name);
    const sub = `${base}/${name}`;
    return h("tr", { "data-folder": sub }, h("td", {}, h("a", { class: "folder", href: `#/files/${encodeURIComponent(groupId)}/${urlPath(sub)}` }, `${name}/`)),
      h("td", {}), h("td", {}), h("td", { class: "muted" }, "folder"), h("td", {}));
  }
  const may = rights.at(file.path);
  const where = `${route}/${urlPath(file.path)}`;
  const download = may.read ? h("button", { type: "button", class: "plain download", "aria-label": `Download ${name}` }, "Download") : null;
  download?.addEventListener("click", () => fetchFile(where, name).catch((e) => notice(e.message)));
  const remove = may.delete ? twoStep("Delete", { "aria-label": `Delete ${name}`, class: "danger delete" }, async () => {
    await api.del(where);
    notice(`${name} deleted`);
    refresh();
  }) : null;
  return h("tr", { "data-path": file.path }, h("td", {}, name), h("td", {}, bytes(file.size)),
    h("td", {}, file.uploaded_date || ""), h("td", {}, file.content_type || ""), h("td", {}, h("span", { class: "actions" }, download, remove)));
}

/** A download: the interface's presigned URL for the file (asked with the token in the
 * header), then the browser fetches that URL, which carries its own signature. */
async function fetchFile(where, name) {
  const { url } = await api.get(where, { url_only: "true" });
  const anchor = h("a", { href: url, download: name, hidden: true });
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
}

/** Where the folder is: a link to each folder above it. */
function crumbs(groupId, folder) {
  const parts = folder.split("/").filter(Boolean);
  return h("nav", { class: "crumbs", "aria-label": "Folders" },
    link("/", "files", groupId),
    parts.map((part, i) => [" ", link(`${part}/`, "files", groupId, ...parts.slice(0, i + 1))]));
}
