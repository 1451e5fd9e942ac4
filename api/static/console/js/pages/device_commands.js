// A device's commands (docs/commands.md): send one (a name, a JSON payload, a timeout, or
// queued for when the device is back) and show its reply, or the server's 504 (no reply in
// time), 409 (offline) or other refusal; and the device's commands, newest first, paged on
// the server with list.js and filtered by state, each reply's payload read on demand (the
// list carries only its status). A command still waiting (queued, or delivered and not yet
// answered) has a Cancel button (a second click confirms): its bytes free at once and the
// device is never sent it.
import * as api from "../api.js";
import { h, field, checkbox, fill, form } from "../dom.js";
import { listView } from "../list.js";
import { when } from "../format.js";
import { twoStep } from "./data_common.js";

const RECENT = 10;
const STATES = ["sent", "queued", "delivered", "answered", "timed_out", "expired", "canceled"];
const WAITING = new Set(["queued", "delivered"]);  // the states a command may be canceled in

export function commandsView(device) {
  const base = api.path`/v2/devices/${device.id}/commands`;
  const result = h("div", { id: "command-result", role: "status" });
  const recent = h("div", { id: "recent-commands" });
  const reload = () => loadRecent(base, recent);
  const el = h("div", { id: "commands", class: "list" }, sendForm(base, result, reload), result, h("h3", {}, "Recent commands"), recent);
  el.ready = reload();
  return el;
}

function sendForm(base, result, reload) {
  const name = field("Command name", { name: "command_name", required: true, maxlength: 128 });
  const payload = h("textarea", { id: "command-payload", rows: 3, cols: 50, spellcheck: "false", value: "{}" });
  const timeout = field("Timeout (seconds, 1 to 60)", { name: "command_timeout", type: "number", min: 1, max: 60, value: 10 });
  const queue = checkbox("Queue it: deliver now or when the device is back, without waiting", { name: "command_queue" });
  return form({ class: "stack", id: "send-command" }, [name.el, h("label", { for: payload.id }, "Payload (a JSON object)"), payload,
    timeout.el, queue.el, h("div", { class: "actions" }, h("button", { type: "submit" }, "Send command"))], async () => {
    const body = { name: name.input.value.trim(), payload: parsePayload(payload.value) };
    delete result.dataset.status;  // set again with this command's answer
    if (queue.input.checked) body.queue = true;
    else body.timeout = Number(timeout.input.value) || 10;
    fill(result, h("p", { class: "muted" }, queue.input.checked ? "Queuing…" : "Waiting for the device's reply…"));
    try {
      showCommand(result, (await api.post(base, body)).command);
    } catch (error) {
      if (!error.status) throw error;
      result.dataset.status = String(error.status);
      fill(result, h("p", { class: "error" }, `${error.status}: ${error.message}`));
    }
    await reload();
  });
}

function parsePayload(text) {
  let value;
  try { value = JSON.parse(text || "{}"); } catch (error) { throw new Error(`The payload is not JSON: ${error.message}`); }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error("The payload must be a JSON object.");
  return value;
}

/** One command as the server answered it: its state and, once answered, the reply. */
function showCommand(where, command) {
  where.dataset.status = command.reply ? "200" : "202";
  where.dataset.state = command.state;
  fill(where, h("p", {}, `${command.name}: ${command.state}`, command.reply ? `, the device's status ${command.reply.status}` : ""),
    command.reply ? h("pre", { class: "reply" }, JSON.stringify(command.reply.payload ?? {}, null, 2)) : null);
}

/** The device's commands, newest first, RECENT a page (list.js pages them on the server);
 * made anew after each send, so the new command heads the first page. */
function loadRecent(base, where) {
  const list = listView({
    path: base, key: "commands", caption: `The device's commands, the newest first, ${RECENT} a page`, limit: RECENT, search: false,
    filters: [{ name: "state", label: "State", options: [["", "All"], ...STATES.map((s) => [s, s])] }],
    columns: [
      ["Command", (c) => c.name], ["State", (c) => c.state], ["Sent", (c) => when(c.created_date)],
      ["Reply", (c) => (c.reply ? replyButton(base, c) : "")],
      ["", (c) => (WAITING.has(c.state) ? cancelButton(base, c, () => loadRecent(base, where)) : "")],
    ],
  });
  fill(where, list);
  return list.ready;
}

function replyButton(base, command) {
  const out = h("span", {});
  const show = h("button", { type: "button", class: "plain", "aria-label": `Show the reply to ${command.name}` }, `status ${command.reply.status}: show`);
  show.addEventListener("click", async () => {
    const { command: full } = await api.get(`${base}/${encodeURIComponent(command.request_id)}`);
    fill(out, h("pre", { class: "reply" }, JSON.stringify(full.reply?.payload ?? {}, null, 2)));
  });
  return fill(out, show);
}

/** Cancel a command still waiting, then show the list again (the state is the server's). */
function cancelButton(base, command, reload) {
  const label = { "data-cancel": command.request_id, "aria-label": `Cancel ${command.name}` };
  return twoStep("Cancel", label, async () => {
    await api.post(`${base}/${encodeURIComponent(command.request_id)}/cancel`, {});
    await reload();
  });
}
