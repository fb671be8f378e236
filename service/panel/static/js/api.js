// The REST API, as the panel calls it: JSON in and out, the session's CSRF token on writes.

const UNSAFE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
let csrfToken = null;

/** Remember the CSRF token of the current session (kept in memory only). */
export function setCsrfToken(token) {
  csrfToken = token || null;
}

/** An error answer of the API: its JSON envelope, or a network failure (status 0). */
export class ApiError extends Error {
  constructor(status, code, message, body = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

/** Call the API; resolves to the parsed JSON body (null for 204), rejects with ApiError. */
export async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (UNSAFE_METHODS.has(method) && csrfToken) headers["X-CSRF-Token"] = csrfToken;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
      cache: "no-store",
    });
  } catch {
    throw new ApiError(0, "network_error", "The service cannot be reached; check your connection and try again.");
  }
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const error = new ApiError(
      response.status,
      (data && data.code) || "http_error",
      (data && data.message) || `The service answered ${response.status}.`,
      data,
    );
    if (response.status === 401 && path !== "/api/session") {
      document.dispatchEvent(new CustomEvent("shortlist:signed-out", { detail: error }));
    }
    throw error;
  }
  return data;
}

/** Path segment for an id taken from API data. */
export function segment(value) {
  return encodeURIComponent(String(value));
}
