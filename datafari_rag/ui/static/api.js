// The sidecar's REST API, with the signed-in user's token; every refusal becomes an ApiError whose
// message is the server's user-facing message, its technical reason kept apart (a details box).

export const PREFIX = document.querySelector('meta[name="api-prefix"]').content;

export const session = {
  get token() { return sessionStorage.getItem("dfr.token"); },
  get user() { return JSON.parse(sessionStorage.getItem("dfr.user") || "null"); },
  get proxied() { return !this.token && !!this.user; }, // signed in by a reverse proxy, not here
  save(token, user) {
    if (token) sessionStorage.setItem("dfr.token", token);
    sessionStorage.setItem("dfr.user", JSON.stringify(user));
  },
  clear() { sessionStorage.removeItem("dfr.token"); sessionStorage.removeItem("dfr.user"); },
};

export class ApiError extends Error {
  constructor(message, status, label, reason) {
    super(message); this.status = status; this.label = label; this.reason = reason;
  }
}

/** The refusal a Datafari error JSON (or anything else a server sent) carries. */
export function refusal(json, status) {
  const error = json?.content?.error || {};
  const message = json?.content?.message || error.reason || `HTTP ${status}`;
  return new ApiError(message, error.code || status, error.label || "httpError", error.reason);
}

export function headers(extra = {}) {
  const out = { "Content-Type": "application/json", Accept: "application/json", ...extra };
  if (session.token && !out["X-API-Key"]) out.Authorization = `Bearer ${session.token}`;
  return out;
}

/** The user a reverse proxy (trusted header) or a gateway already names, if any (Datafari's
 * v1.0 users/current), and whether the API takes them as an administrator. */
export async function proxiedUser() {
  try {
    const response = await fetch(`${PREFIX.replace(/\/v2\.0$/, "/v1.0")}/users/current`, { headers: { Accept: "application/json" } });
    const name = response.ok ? (await response.json()).content?.name : null;
    if (!name) return null;
    const admin = await fetch(`${PREFIX}/admin/settings`, { headers: { Accept: "application/json" } }).then((r) => r.ok, () => false);
    return { username: name, admin };
  } catch { return null; }
}

export async function api(path, { method = "GET", body, extraHeaders } = {}) {
  const response = await fetch(PREFIX + path, {
    method, headers: headers(extraHeaders), body: body === undefined ? undefined : JSON.stringify(body),
  });
  let json = null;
  try { json = await response.json(); } catch { /* not JSON: a proxy's page */ }
  if (!json) throw new ApiError(`HTTP ${response.status}`, response.status, "httpError");
  if (json.status !== "OK") throw refusal(json, response.status);
  return json.content;
}

/** Datafari's document address (/Datafari/URL): where a citation of a document with no web
 * address opens, here read with the user's token as JSON (its text, where the passage is). */
export const DATAFARI = PREFIX.replace(/\/rest\/v2\.0$/, "");

export function documentAddress(id, passage) {
  const query = new URLSearchParams({ id });
  if (passage) query.set("passage", passage.slice(0, 4000));
  return `${DATAFARI}/URL?${query}`;
}

export async function preview(id, passage) {
  const response = await fetch(documentAddress(id, passage), { headers: { ...headers(), Accept: "application/json" } });
  const json = await response.json().catch(() => null);
  if (!json || json.status !== "OK") throw refusal(json, response.status);
  return json.content.document;
}

/** ai/stream in Datafari 7.0's NDJSON: calls onEvent(type, data) for each event as it comes. */
export async function stream(body, onEvent, signal) {
  const response = await fetch(`${PREFIX}/ai/stream`, {
    method: "POST", headers: { ...headers(), Accept: "application/x-ndjson" }, body: JSON.stringify(body), signal,
  });
  if (!response.body) throw new ApiError(`HTTP ${response.status}`, response.status, "httpError");
  if (!(response.headers.get("Content-Type") || "").includes("ndjson")) {
    throw refusal(await response.json().catch(() => null), response.status);
  }
  for await (const line of pieces(response, "\n")) {
    if (line.trim()) { const event = JSON.parse(line); onEvent(event.type, event.data); }
  }
}

/** A Server-Sent Events stream of the API, read with the user's token (EventSource sends none):
 * calls onEvent(name, data) for each event until the stream ends. */
export async function readEvents(path, onEvent) {
  const response = await fetch(PREFIX + path, { headers: { ...headers(), Accept: "text/event-stream" } });
  if (!response.ok || !response.body) throw new ApiError(`HTTP ${response.status}`, response.status, "httpError");
  for await (const block of pieces(response, "\n\n")) {
    const lines = Object.fromEntries(block.split("\n").filter((l) => !l.startsWith(":")).map((l) => {
      const at = l.indexOf(": ");
      return [l.slice(0, at), l.slice(at + 2)];
    }));
    if (lines.event) onEvent(lines.event, JSON.parse(lines.data));
  }
}

/** A response body cut at each ``separator`` as it arrives. */
async function* pieces(response, separator) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf(separator)) >= 0) {
      yield buffer.slice(0, cut);
      buffer = buffer.slice(cut + separator.length);
    }
  }
}
