/**
 * Which request bodies are read as JSON. Only a declared JSON media type is: a browser can send
 * `text/plain`, `application/x-www-form-urlencoded` or `multipart/form-data` cross-site without
 * a CORS preflight, so parsing those as JSON would let any web page drive the API with the
 * credentials a browser has cached (CSRF).
 */
import type { IncomingHttpHeaders } from 'node:http';

const JSON_MEDIA_TYPE = /^application\/(?:[a-z0-9!#$&^_.+-]+\+)?json$/;

/** `application/json` or `application/<anything>+json`, parameters (charset) aside. */
export function isJsonContentType(header: string | undefined): boolean {
  if (typeof header !== 'string') return false;
  const semicolon = header.indexOf(';');
  const mediaType = (semicolon < 0 ? header : header.slice(0, semicolon)).trim().toLowerCase();
  return JSON_MEDIA_TYPE.test(mediaType);
}

const CHARSET = /;\s*charset\s*=\s*("?)([^";\s]*)\1\s*(?=;|$)/i;

/**
 * Whether a body of this type is UTF-8 by declaration: no charset, or `utf-8` (also spelt `utf8`)
 * in any case. The body parser reads other `utf-*` charsets as such and refuses the rest (415).
 */
export function isUtf8ContentType(header: string | undefined): boolean {
  const charset = CHARSET.exec(header ?? '');
  return charset === null || ['utf-8', 'utf8'].includes((charset[2] ?? '').toLowerCase());
}

/**
 * The type with `charset=utf8` spelt `utf-8`, as the body parser knows it (it refused `utf8`, a
 * spelling game servers' HTTP libraries use and the ping fast path always read).
 */
export function withUtf8Spelling(header: string): string {
  return header.replace(CHARSET, (whole, _quote: string, name: string) => (name.toLowerCase() === 'utf8' ? '; charset=utf-8' : whole));
}

/** Whether the request carries a body at all (an empty one needs no content type). */
export function hasRequestBody(headers: IncomingHttpHeaders): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = Number(headers['content-length']);
  return Number.isFinite(length) && length > 0;
}

export const JSON_CONTENT_TYPE_REQUIRED = 'the request body must be JSON: send it with Content-Type: application/json';
