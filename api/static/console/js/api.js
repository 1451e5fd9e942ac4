// The one client of the interface: every call the console makes goes through `call`,
// with the signed-in person's token, held here in memory only (never in storage or a
// cookie: a reload or a new tab signs in again).

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

let token = null;
let onSignedOut = () => {};

export function setToken(value) { token = value; }
export function hasToken() { return token !== null; }
/** Called when the server says the session is over (a 401 on a signed-in call). */
export function whenSignedOut(callback) { onSignedOut = callback; }

/** One call: `json` or `form` for a body, `query` for the query, `bearer` to use another
 * secret than the token (a sign-in challenge's session), `headers` to add (If-Match).
 * Answers the parsed body. */
export async function call(method, path, { json, form, query, bearer, headers: extra } = {}) {
  const headers = { Accept: "application/json", ...extra };
  const secret = bearer || token;
  if (secret) headers.Authorization = `Bearer ${secret}`;
  let body;
  if (json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(json);
  } else if (form !== undefined) {
    body = new URLSearchParams(clean(form));
  }
  const response = await fetch(withQuery(path, query), { method, headers, body, credentials: "omit" });
  const answer = response.headers.get("Content-Type")?.includes("json") ? await response.json() : {};
  if (response.ok) return answer;
  throw failure(response, answer, bearer);
}

/** A GET answered as the Response itself (a file to download, a stream to read), with the
 * token in the Authorization header as every call (never in the URL); fails as `call`. */
export async function raw(path, { query, signal, accept = "*/*", headers = {} } = {}) {
  const sent = { ...headers, Accept: accept };
  if (token) sent.Authorization = `Bearer ${token}`;
  const response = await fetch(withQuery(path, query), { headers: sent, signal, credentials: "omit", cache: "no-store" });
  if (response.ok) return response;
  const answer = response.headers.get("Content-Type")?.includes("json") ? await response.json() : {};
  throw failure(response, answer);
}

function failure(response, answer, bearer) {
  if (response.status === 401 && !bearer && token) onSignedOut("Your session ended: sign in again.");
  return new ApiError(response.status, answer.message || `${response.status} ${response.statusText}`);
}

export const get = (path, query) => call("GET", path, { query });
export const post = (path, json) => call("POST", path, { json });
export const patch = (path, json) => call("PATCH", path, { json });
export const del = (path, query) => call("DELETE", path, { query });

/** A path with each part percent-encoded: path`/v2/users/${id}`. */
export function path(strings, ...parts) {
  return strings.reduce((out, text, i) => out + text + (i < parts.length ? encodeURIComponent(parts[i]) : ""), "");
}

function withQuery(path, query) {
  const params = new URLSearchParams(clean(query || {}));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

function clean(values) {
  return Object.entries(values).filter(([, v]) => v !== undefined && v !== null && v !== "");
}
