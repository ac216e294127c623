/**
 * Which request bodies are read as JSON. Only a declared JSON media type is: a browser can send
 * `text/plain`, `application/x-www-form-urlencoded` or `multipart/form-data` cross-site without
 * a CORS preflight, so parsing those as JSON would let any web page drive the API with the
 * credentials a browser has cached (CSRF).
 */
import type { IncomingHttpHeaders } from 'node:http';

const JSON_MEDIA_TYPE = /^application\/(?:[a-z0-9!#$&^_.+-]+\+)?json$/;

/** The media type of a Content-Type, parameters aside, in lower case ('' when there is none). */
function mediaTypeOf(header: string | undefined): string {
  if (typeof header !== 'string') return '';
  const semicolon = header.indexOf(';');
  return (semicolon < 0 ? header : header.slice(0, semicolon)).trim().toLowerCase();
}

/** `application/json` or `application/<anything>+json`, parameters (charset) aside. */
export function isJsonContentType(header: string | undefined): boolean {
  return JSON_MEDIA_TYPE.test(mediaTypeOf(header));
}

/** The types a plain `curl -d`, a game engine's HTTP client or a Maestro game server may send JSON as. */
const ROOMS_LENIENT_MEDIA_TYPES = new Set(['', 'text/plain', 'application/x-www-form-urlencoded']);

/**
 * Which bodies the rooms API reads as JSON: a JSON type as everywhere, and also a body sent with
 * no type, `text/plain` or `application/x-www-form-urlencoded`, as Maestro parses the body as JSON
 * whatever its type (game servers built for it send those). The CSRF reason above does not hold on
 * the rooms port: its credential is a room token sent as a bearer header, which a browser never
 * adds by itself (and with ping auth off there is no credential to borrow). Other types (multipart,
 * binary, XML) stay refused. The management port never takes these (`isJsonContentType`).
 */
export function isRoomsJsonContentType(header: string | undefined): boolean {
  return isJsonContentType(header) || ROOMS_LENIENT_MEDIA_TYPES.has(mediaTypeOf(header));
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
