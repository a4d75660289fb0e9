// The request target as routes match it: origin form (RFC 9112 3.2) with a normal path (RFC 3986 6.2.2.2).

/**
 * A request target in absolute form ("GET http://host/v1/listings", which HTTP/1.1 servers must accept)
 * as the origin form routes match; any other target that is not a path (the asterisk form of "OPTIONS *")
 * becomes one that matches no endpoint, so it still gets a request id, the key check and a log line.
 */
function originForm(url: string): string {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(url);
  if (!authority) return `/${url}`;
  const rest = url.slice(authority[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** A percent-encoded unreserved character (letters, digits, - . _ ~). */
const ENCODED_UNRESERVED = /%(?:3[0-9]|4[1-9A-F]|5[0-9A]|6[1-9A-F]|7[0-9A]|2[DE]|5F|7E)/gi;
/**
 * A path with its percent-encoded unreserved characters decoded: RFC 3986 (6.2.2.2) makes
 * /v1/listings/%73tats the same URI as /v1/listings/stats. Other escapes (%2F, %20, …) stay as they
 * are, for the route's own decoding of its parameters.
 */
const normalPath = (path: string): string =>
  path.replace(ENCODED_UNRESERVED, (e) => String.fromCharCode(Number.parseInt(e.slice(1), 16)));

/** The request target in origin form with a normal path, as routes match it. */
export function normalTarget(url: string): string {
  const target = url.charCodeAt(0) === 47 /* / */ ? url : originForm(url);
  const q = target.indexOf('?');
  const pct = target.indexOf('%');
  if (pct === -1 || (q !== -1 && pct > q)) return target;
  return q === -1 ? normalPath(target) : normalPath(target.slice(0, q)) + target.slice(q);
}
