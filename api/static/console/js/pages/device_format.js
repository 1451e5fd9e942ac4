// How the device pages show a project (shared by the list and the device page); a time is
// format.js's `when`.
import * as api from "../api.js";
import { h } from "../dom.js";

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
