// Building the page from data without innerHTML: text is always text (nothing the server
// or a user typed can become markup), and no inline handlers (the CSP forbids them).

/** An element: h("button", {class: "plain", onclick: f}, "Save"). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "value") el.value = value;
    else if (name === "checked") el.checked = Boolean(value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace what an element holds. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let fieldCount = 0;

/** A labelled input: the label names the control (every input has one). */
export function field(label, attrs = {}) {
  const id = attrs.id || `f${++fieldCount}`;
  const input = attrs.type === "select" ? select(id, attrs) : h("input", { ...attrs, id });
  return { label: h("label", { for: id }, label), input, el: h("div", {}, h("label", { for: id }, label), input) };
}

function select(id, attrs) {
  const { options = [], type, ...rest } = attrs;
  return h("select", { ...rest, id }, options.map(([value, text]) => h("option", { value }, text)));
}

/** A checkbox with its label after it. */
export function checkbox(label, attrs = {}) {
  const id = attrs.id || `f${++fieldCount}`;
  const input = h("input", { ...attrs, id, type: "checkbox" });
  return { input, el: h("label", { class: "inline", for: id }, input, label) };
}

/** A form that calls `submit(form)` and shows what went wrong inside itself. */
export function form(attrs, children, submit) {
  const message = h("p", { class: "error", role: "alert" });
  const el = h("form", attrs, children, message);
  el.addEventListener("submit", async (event) => {
    event.preventDefault();
    message.textContent = "";
    const button = el.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    try {
      await submit(el);
    } catch (error) {
      message.textContent = error.message || String(error);
    } finally {
      if (button) button.disabled = false;
    }
  });
  return el;
}

/** A short notice in the live region, read out by screen readers. */
export function notice(text) {
  const status = document.getElementById("status");
  status.textContent = text;
  setTimeout(() => { if (status.textContent === text) status.textContent = ""; }, 5000);
}

/** A table of rows: columns are [heading, row => cell content]. */
export function table(caption, columns, rows) {
  return h("table", {},
    h("caption", { class: "muted" }, caption),
    h("thead", {}, h("tr", {}, columns.map(([name]) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, rows.map((row) => h("tr", {}, columns.map(([, cell]) => h("td", {}, cell(row)))))));
}

export function yesNo(value) {
  return value ? "yes" : "no";
}
