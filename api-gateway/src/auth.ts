/**
 * Authentication: HTTP Basic on the management API (credentials from config or a Kubernetes
 * Secret) and per-room bearer tokens on the rooms API. Comparisons are constant time; credentials
 * are never logged.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { verifyRoomToken } from '../../common/src/rooms/room-token';
import { UnauthenticatedError } from './errors';

export interface Credentials {
  username: string;
  password: string;
}

/** Where the current credentials come from; undefined means "none available right now". */
export interface CredentialsProvider {
  current(): Credentials | undefined;
}

export function staticCredentials(credentials: Credentials): CredentialsProvider {
  const frozen = Object.freeze({ ...credentials });
  return { current: () => frozen };
}

const BASIC_REALM = 'Basic realm="roomkeeper", charset="UTF-8"';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Constant-time equality of two strings (digests have equal length, so lengths do not leak). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/** Parses `Basic <base64(user:password)>`; undefined when malformed. */
export function parseBasicAuthorization(header: string | undefined): Credentials | undefined {
  if (typeof header !== 'string') return undefined;
  const m = /^Basic[ ]+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!m?.[1]) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The digests of the expected credentials, made once per credentials object (a rotation brings a new one). */
const expectedDigests = new WeakMap<Credentials, { username: Buffer; password: Buffer }>();

export function credentialsMatch(given: Credentials, expected: Credentials): boolean {
  let digests = expectedDigests.get(expected);
  if (!digests) expectedDigests.set(expected, (digests = { username: digest(expected.username), password: digest(expected.password) }));
  // Both compared every time, so the time taken does not say which one was wrong.
  const userOk = timingSafeEqual(digest(given.username), digests.username);
  const passOk = timingSafeEqual(digest(given.password), digests.password);
  return userOk && passOk;
}

/** Whether an Authorization header carries the current Basic credentials. */
export function basicAuthorized(provider: CredentialsProvider, header: string | undefined): boolean {
  const expected = provider.current();
  const given = parseBasicAuthorization(header);
  return given !== undefined && expected !== undefined && credentialsMatch(given, expected);
}

/** Express middleware: 401 with `WWW-Authenticate` unless the Basic credentials match. */
export function basicAuth(provider: CredentialsProvider): RequestHandler {
  return (req, res, next) => {
    if (!basicAuthorized(provider, req.headers.authorization)) {
      const given = parseBasicAuthorization(req.headers.authorization);
      res.setHeader('WWW-Authenticate', BASIC_REALM);
      const header = req.headers.authorization;
      next(new UnauthenticatedError(given ? 'invalid credentials'
        : header === undefined ? 'missing credentials: use HTTP Basic authentication'
          : 'malformed credentials: send Authorization: Basic <base64 of user:password>'));
      return;
    }
    next();
  };
}

/** The token of `Authorization: Bearer <token>`, if any. */
export function bearerToken(header: string | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/** Express middleware for `/scheduler/:schedulerName/rooms/:roomId/...`: the room's token must match. */
export function roomTokenAuth(secrets: readonly string[]): RequestHandler {
  return (req, res, next) => {
    const params = req.params as Record<string, string | undefined>;
    const token = bearerToken(req.headers.authorization);
    if (!verifyRoomToken(secrets, params.schedulerName ?? '', params.roomId ?? '', token)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="roomkeeper-rooms"');
      next(new UnauthenticatedError(token ? 'invalid room token' : 'missing room token: send Authorization: Bearer $ROOMKEEPER_ROOM_TOKEN'));
      return;
    }
    next();
  };
}
