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

/**
 * `timeout` (ms, none when 0): a request not answered by then is given up, with an ApiError (status 0, as a server
 * that cannot be reached) saying so, so a change whose connection hangs never leaves its button waiting for good.
 * The page's changes pass it: a change tapped again is safe, since one made already is refused.
 */
export async function request(method, url, body = undefined, { signal, headers: extra = {}, timeout = 0 } = {}) {
  const headers = { ...extra, "X-CSRF-Token": csrfToken, Accept: "application/json" };
  let payload;
  if (body instanceof Blob) {
    headers["Content-Type"] = body.type || "image/jpeg";
    payload = body;
  } else if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(body);
  }
  const late = timeout ? new AbortController() : null;
  const timer = late && setTimeout(() => late.abort(), timeout);
  const signals = [signal, late?.signal].filter(Boolean);
  let response;
  let text;
  try {
    response = await fetch(url, { method, headers, body: payload, signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0],
      credentials: "same-origin" });
    text = await response.text();
  } catch (error) {
    if (late?.signal.aborted && !signal?.aborted) {
      const given = new ApiError(0, `the okgin server did not answer within ${timeout / 1000} s; tapping again is safe: what it did already is not done twice`);
      given.timedOut = true; // for a caller that says it in its own words (a frame is sent again by itself)
      throw given;
    }
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, "the okgin server cannot be reached; is it still running?");
  } finally {
    clearTimeout(timer);
  }
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
export const put = (url, body, options = {}) => request("PUT", url, body, options);
export const del = (url, options = {}) => request("DELETE", url, undefined, options);
