// The sidecar's REST API, with the signed-in user's token; every refusal becomes an Error whose
// message is the server's reason (what the user is shown).

const PREFIX = document.querySelector('meta[name="api-prefix"]').content;

export const session = {
  get token() { return sessionStorage.getItem("dfr.token"); },
  get user() { return JSON.parse(sessionStorage.getItem("dfr.user") || "null"); },
  save(token, user) {
    sessionStorage.setItem("dfr.token", token);
    sessionStorage.setItem("dfr.user", JSON.stringify(user));
  },
  clear() { sessionStorage.removeItem("dfr.token"); sessionStorage.removeItem("dfr.user"); },
};

export class ApiError extends Error {
  constructor(message, status, label) { super(message); this.status = status; this.label = label; }
}

export function headers(extra = {}) {
  const out = { "Content-Type": "application/json", Accept: "application/json", ...extra };
  if (session.token && !out["X-API-Key"]) out.Authorization = `Bearer ${session.token}`;
  return out;
}

export async function api(path, { method = "GET", body, extraHeaders } = {}) {
  const response = await fetch(PREFIX + path, {
    method, headers: headers(extraHeaders), body: body === undefined ? undefined : JSON.stringify(body),
  });
  let json = null;
  try { json = await response.json(); } catch { /* not JSON: a proxy's page */ }
  if (!json) throw new ApiError(`HTTP ${response.status}`, response.status, "httpError");
  if (json.status !== "OK") {
    const error = json.content?.error || {};
    throw new ApiError(error.reason || json.content?.message || "Error", error.code || response.status, error.label);
  }
  return json.content;
}

/** ai/stream in Datafari 7.0's NDJSON: calls onEvent(type, data) for each event as it comes. */
export async function stream(body, onEvent, signal) {
  const response = await fetch(`${PREFIX}/ai/stream`, {
    method: "POST", headers: { ...headers(), Accept: "application/x-ndjson" }, body: JSON.stringify(body), signal,
  });
  if (!response.body) throw new ApiError(`HTTP ${response.status}`, response.status, "httpError");
  if (!(response.headers.get("Content-Type") || "").includes("ndjson")) {
    const json = await response.json();
    throw new ApiError(json.content?.error?.reason || json.content?.message || "Error", response.status);
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, cut).trim();
      buffer = buffer.slice(cut + 1);
      if (line) { const event = JSON.parse(line); onEvent(event.type, event.data); }
    }
  }
}
