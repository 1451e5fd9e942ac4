// Live changes for the device pages: the live-changes stream (GET /v2/events, docs/events.md)
// read with `fetch` and the token in the Authorization header (never in the URL: the
// browser's EventSource cannot send headers). A stream lives as long as the page it serves
// (life.js): it opens once the page is shown, so a page the router dropped (it ended
// loading after the person moved on) never opens one, and it is closed when the page is
// left or the person signs out (the server also ends it with `end` once the session is
// gone). Nothing watches the document for this: the router ends the page's life.
import * as api from "../api.js";

const RETRY_MS = 3000;  // a dropped or refused stream (429: the account's streams) is retried

/** Read `kinds` (and one device's only, with `deviceId`) while the page of `life` is shown,
 * calling `onEvent({event, id, data})`, and `onOpen()` each time the stream opens;
 * `owner.dataset.live` says "open" or "closed". Answers a function that closes it sooner. */
export function watchLive(life, owner, { kinds, deviceId, onEvent, onOpen = () => {} }) {
  const controller = new AbortController();
  const stop = () => {
    controller.abort();
    owner.dataset.live = "closed";
  };
  life.signal.addEventListener("abort", stop, { once: true });
  const marks = {
    opened: () => { owner.dataset.live = "open"; onOpen(); },
    closed: () => { owner.dataset.live = "closed"; },
    handle: (event) => (event.event === "end" ? stop() : onEvent(event)),  // end: the credentials no longer hold
  };
  life.whenShown(() => run({ kinds, device_id: deviceId }, controller.signal, marks));
  return stop;
}

/** The stream, read again after a drop, until `signal` aborts or the session is over. */
async function run(query, signal, { opened, closed, handle }) {
  let lastId = null;
  while (!signal.aborted) {
    try {
      const headers = lastId ? { "Last-Event-ID": lastId } : {};
      const response = await api.raw("/v2/events", { query, signal, headers, accept: "text/event-stream" });
      opened();
      await readEvents(response.body, signal, (event) => {
        if (event.id) lastId = event.id;
        handle(event);
      });
    } catch (error) {
      if (signal.aborted || error.status === 401) break;  // left, or signed out
    }
    if (!signal.aborted) closed();
    await pause(RETRY_MS, signal);
  }
}

/** Server-Sent Events from a response body: each block of lines, parsed, handed on. */
async function readEvents(body, signal, handle) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  signal.addEventListener("abort", () => reader.cancel().catch(() => {}), { once: true });
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    // Lines end with CRLF, LF or CR (the server sends CRLF); a CR last in a chunk waits
    // for the next one, which may begin with its LF.
    buffer = (buffer + value).replace(/\r\n|\r(?!$)/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const event = parse(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      if (event) handle(event);
    }
  }
}

function parse(block) {
  const out = { event: "message", id: null, data: [] };
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue;  // a keep-alive comment
    const at = line.indexOf(":");
    const name = at < 0 ? line : line.slice(0, at);
    const value = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
    if (name === "event") out.event = value;
    else if (name === "id") out.id = value;
    else if (name === "data") out.data.push(value);
  }
  if (!out.data.length) return null;
  try {
    return { event: out.event, id: out.id, data: JSON.parse(out.data.join("\n")) };
  } catch {
    return null;
  }
}

function pause(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

/** A device's online dot: text and colour, found again by `markOnline` when presence moves. */
export function onlineDot(device) {
  const el = document.createElement("span");
  el.className = "presence";
  el.dataset.onlineOf = device.id;
  setOnline(el, Boolean(device.is_online));
  return el;
}

/** Every dot of `deviceId` in `root`, set to `online`. */
export function markOnline(root, deviceId, online) {
  for (const el of root.querySelectorAll(`[data-online-of="${CSS.escape(deviceId)}"]`)) setOnline(el, online);
}

function setOnline(el, online) {
  el.dataset.online = String(online);
  el.textContent = online ? "online" : "offline";
}
