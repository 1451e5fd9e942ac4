// How the device pages show a time and a project (shared by the list and the device page).
import * as api from "../api.js";
import { h } from "../dom.js";

/** A time as the server gave it, shorter: "2026-11-27 20:01:02 UTC". */
export function when(iso) {
  if (!iso) return "never";
  return `${iso.replace("T", " ").replace(/\.\d+/, "").replace(/Z$/, "")} UTC`;
}

/** A function showing a project's name, read once per project for one page (the ID until
 * it is known, or when the caller may not read the project). */
export function projectNamer() {
  const names = new Map();
  return (projectId) => {
    if (!projectId) return "(organization)";
    const el = h("span", { title: projectId }, projectId);
    if (!names.has(projectId)) {
      names.set(projectId, api.get(api.path`/v2/projects/${projectId}`).then((r) => r.project.name, () => projectId));
    }
    names.get(projectId).then((name) => { el.textContent = name; });
    return el;
  };
}
