// A device's twin (docs/twins.md): `reported` beside `desired` leaf by leaf, with the time
// each leaf was last set and whether it is still to be applied (the delta); and, for those
// who may update the device, an editor of `desired`. The editor sends the change as a JSON
// merge patch against the version it was read at. The version moves with `reported` too,
// so on a 409 whose `desired` is still the one the person edited from (a device reported
// meanwhile) the same patch is sent again at the new version, a few times at most; when
// `desired` itself changed meanwhile it shows the current document and puts the person's
// change onto it in the editor, to check and save again. Nothing is ever overwritten
// without the person saving it.
import * as api from "../api.js";
import { h, fill, form, notice } from "../dom.js";
import { when } from "../format.js";

const RESENDS = 3;  // a 409 caused by `reported` alone is retried this many times

export async function twinView(device, may) {
  const path = api.path`/v2/devices/${device.id}/twin`;
  let twin = (await api.get(path)).twin;
  const shown = h("div", { id: "twin-document" });
  const el = h("div", { id: "twin" }, shown);
  const show = () => {
    el.dataset.version = String(twin.version);
    fill(shown, h("p", { id: "twin-version" }, `Version ${twin.version}`, twin.updated_date ? `, updated ${when(twin.updated_date)}` : ""),
      leavesTable(twin));
  };
  show();
  const editor = may.update ? desiredEditor(path, twin, (next) => { twin = next; show(); }) : null;
  if (editor) el.append(editor.el);
  /** The twin changed (a live event): shown again; the editor follows unless it holds an edit. */
  async function changed(version) {
    if (version !== undefined && version === twin.version) return;
    twin = (await api.get(path)).twin;
    show();
    editor?.moved(twin);
  }
  return { el, changed };
}

function leavesTable(twin) {
  const desired = leaves(twin.desired), reported = leaves(twin.reported);
  const setAt = { desired: leaves(twin.metadata?.desired || {}), reported: leaves(twin.metadata?.reported || {}) };
  const pending = leaves(twin.delta || {});
  const keys = [...new Set([...desired.keys(), ...reported.keys()])].sort();
  if (!keys.length) return h("p", { class: "muted", id: "twin-empty" }, "The twin is empty: nothing desired, nothing reported.");
  const cell = (map, key) => (map.has(key) ? h("code", {}, JSON.stringify(map.get(key))) : "");
  return h("table", { id: "twin-leaves" }, h("caption", { class: "muted" }, "Desired and reported, leaf by leaf"),
    h("thead", {}, h("tr", {}, ["Key", "Desired", "Set", "Reported", "Reported at", "To apply"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, keys.map((key) => h("tr", { "data-key": key }, h("td", {}, h("code", {}, key)),
      h("td", { class: "desired" }, cell(desired, key)), h("td", {}, setAt.desired.has(key) ? when(setAt.desired.get(key)) : ""),
      h("td", { class: "reported" }, cell(reported, key)), h("td", {}, setAt.reported.has(key) ? when(setAt.reported.get(key)) : ""),
      h("td", {}, pending.has(key) ? "yes" : "")))));
}

/** The leaves of a JSON object by dotted path ("led.color"); arrays and empty objects are leaves. */
function leaves(value, prefix = "", out = new Map()) {
  for (const [key, inner] of Object.entries(value || {})) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (isObject(inner) && Object.keys(inner).length) leaves(inner, name, out);
    else out.set(name, inner);
  }
  return out;
}

function desiredEditor(path, twin, saved) {
  const state = { base: twin.desired, version: twin.version };
  const text = h("textarea", { id: "twin-desired", rows: 8, cols: 60, spellcheck: "false", value: pretty(twin.desired) });
  const against = h("p", { class: "muted", id: "twin-editor-version" });
  const conflict = h("div", { id: "twin-conflict", role: "status" });
  const setBase = (next) => {
    state.base = next.desired;
    state.version = next.version;
    against.textContent = `Editing against version ${next.version}.`;
  };
  setBase(twin);
  const el = form({ class: "stack wide", id: "twin-editor" }, [
    h("label", { for: text.id }, "Desired state (JSON)"), text, against, conflict,
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Save desired state")),
  ], async () => {
    const patch = mergeDiff(state.base, parseObject(text.value));
    const asked = state.version;
    const { twin: next, current, busy } = await sendPatch(path, patch, state.base, asked);
    if (next) {
      setBase(next);
      text.value = pretty(next.desired);
      fill(conflict);
      saved(next);
      notice("Desired state saved");
    } else if (busy) {
      setBase(current);
      saved(current);
      fill(conflict, h("p", { class: "error" }, `The device kept reporting while this was saved: its version moved on each of ${RESENDS + 1} tries (now ${current.version}). Nothing was saved.`),
        h("p", {}, "Its desired state is still the one you edited from, and your change is still in the editor above: try again."));
      text.focus();
    } else {
      setBase(current);
      text.value = pretty(mergePatch(current.desired, patch));
      saved(current);
      fill(conflict, h("p", { class: "error" }, `The twin changed meanwhile: it is at version ${current.version}, not ${asked}. Nothing was saved.`),
        h("p", {}, "Its desired state now:"), h("pre", { id: "twin-current" }, pretty(current.desired)),
        h("p", {}, "Your change is put onto it in the editor above: check it, then save again."));
      text.focus();
    }
  });
  /** The twin moved (someone else's change): follow it unless the editor holds an edit. */
  const moved = (next) => {
    if (text.value.trim() !== pretty(state.base)) return;
    setBase(next);
    text.value = pretty(next.desired);
  };
  return { el, moved };
}

/** Send `patch` at `version`. On a 409 the twin is read again: when its `desired` is still
 * `base` (only `reported` moved the version) the patch goes again at the new version, up
 * to RESENDS times. Answers {twin} once saved, {current} (the twin read last) when
 * `desired` changed meanwhile, or {current, busy: true} when the tries ran out on a
 * device that kept reporting (no conflict for the person to resolve). */
async function sendPatch(path, patch, base, version) {
  for (let tries = 0; ; tries++) {
    try {
      return { twin: (await api.patch(path, { desired: patch, version })).twin };
    } catch (error) {
      if (error.status !== 409) throw error;
    }
    const { twin: current } = await api.get(path);
    if (!sameJson(current.desired || {}, base || {})) return { current };
    if (tries >= RESENDS) return { current, busy: true };
    version = current.version;
  }
}

/** Whether two JSON values are equal, whatever the order of their objects' keys. */
function sameJson(a, b) {
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameJson(a[k], b[k]));
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  return a === b;
}

function parseObject(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`The desired state is not JSON: ${error.message}`);
  }
  if (!isObject(value)) throw new Error("The desired state must be a JSON object.");
  return value;
}

/** The JSON merge patch (RFC 7396) that turns `before` into `after`. */
export function mergeDiff(before, after) {
  const patch = {};
  for (const key of Object.keys(before || {})) if (!(key in after)) patch[key] = null;
  for (const [key, value] of Object.entries(after)) {
    const old = before?.[key];
    if (isObject(old) && isObject(value)) {
      const inner = mergeDiff(old, value);
      if (Object.keys(inner).length) patch[key] = inner;
    } else if (JSON.stringify(old) !== JSON.stringify(value)) patch[key] = value;
  }
  return patch;
}

/** `patch` applied to `target` as a JSON merge patch (RFC 7396). */
export function mergePatch(target, patch) {
  if (!isObject(patch)) return patch;
  const out = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function pretty(value) {
  return JSON.stringify(value || {}, null, 2);
}
