// Talking to the okgin server: every request carries the session's CSRF token, every failure
// becomes an Error whose message is the server's own {"error": ...} text.

const csrfToken = document.querySelector('meta[name="csrf-token"]')?.content ?? "";

export class ApiError extends Error {
  constructor(status, message, data = null) {
    super(message);
    this.status = status;
    this.data = data; // the whole JSON answer (a 409 carries what is already there)
  }
}

export async function request(method, url, body = undefined, { signal, headers: extra = {} } = {}) {
  const headers = { ...extra, "X-CSRF-Token": csrfToken, Accept: "application/json" };
  let payload;
  if (body instanceof Blob) {
    headers["Content-Type"] = body.type || "image/jpeg";
    payload = body;
  } else if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(url, { method, headers, body: payload, signal, credentials: "same-origin" });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, "the okgin server cannot be reached; is it still running?");
  }
  const text = await response.text();
  let data;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    throw new ApiError(response.status, data?.error ?? `the server answered ${response.status}`, data);
  }
  return data;
}

export const get = (url) => request("GET", url);
export const post = (url, body, options = {}) => request("POST", url, body, options);
export const put = (url, body) => request("PUT", url, body);
export const del = (url) => request("DELETE", url);
