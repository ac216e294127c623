/**
 * Authentication: HTTP Basic on the management API (credentials from config or a Kubernetes
 * Secret) and per-room bearer tokens on the rooms API. Comparisons are constant time; credentials
 * are never logged.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { verifyRoomToken } from '../../common/src/rooms/room-token';
import { UnauthenticatedError, UnavailableError } from './errors';
import { RoomsRefusalReason, type RoomsRefusalLog } from './http/rooms-refusal-log';
import type { RoomTokenOwners } from './room-token-owners';

export interface Credentials {
  username: string;
  password: string;
}

/** Where the current credentials come from; undefined means "none available right now". */
export interface CredentialsProvider {
  current(): Credentials | undefined;
  /** While none are available: why (the Secret could not be read yet), for a 503 rather than a 401. */
  unavailableReason?(): string | undefined;
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

/** What is kept per expected credentials object (a rotation brings a new one, and so a fresh entry). */
interface Expected {
  username: Buffer;
  password: Buffer;
  /** Authorization headers that matched these credentials, as sent (see `basicAuthorized`). */
  accepted: Set<string>;
}

const expectedOf = new WeakMap<Credentials, Expected>();

function expectedFor(credentials: Credentials): Expected {
  let expected = expectedOf.get(credentials);
  if (!expected) expectedOf.set(credentials, (expected = { username: digest(credentials.username), password: digest(credentials.password), accepted: new Set() }));
  return expected;
}

export function credentialsMatch(given: Credentials, expected: Credentials): boolean {
  const digests = expectedFor(expected);
  // Both compared every time, so the time taken does not say which one was wrong.
  const userOk = timingSafeEqual(digest(given.username), digests.username);
  const passOk = timingSafeEqual(digest(given.password), digests.password);
  return userOk && passOk;
}

/** How many spellings of one valid Authorization header are remembered (`Basic` or `basic`, spaces). */
const ACCEPTED_HEADERS = 8;

/**
 * Whether an Authorization header carries the current Basic credentials. A header that matched
 * before is found in a set instead of being decoded and digested again (two SHA-256 digests cost
 * about 35 µs here, on every allocation a matchmaker sends). Only headers that matched are kept,
 * at most ACCEPTED_HEADERS per credentials object, so a wrong guess can never fill the set. The
 * lookup hashes the given string with V8's seeded string hash and compares contents only when
 * that hash is equal, so its time says nothing about the credentials beyond what a digest's did.
 */
export function basicAuthorized(provider: CredentialsProvider, header: string | undefined): boolean {
  const expected = provider.current();
  if (expected === undefined || header === undefined) return false;
  const known = expectedFor(expected);
  if (known.accepted.has(header)) return true;
  const given = parseBasicAuthorization(header);
  const ok = given !== undefined && credentialsMatch(given, expected);
  if (ok && known.accepted.size < ACCEPTED_HEADERS) known.accepted.add(header);
  return ok;
}

/** Well-formed Basic credentials that are not the management API's: where the right ones come from. */
const INVALID_CREDENTIALS = "invalid credentials: the user or the password is wrong; send the management API's, set by ROOMKEEPER_AUTH_USERNAME and ROOMKEEPER_AUTH_PASSWORD or held in the Secret ROOMKEEPER_AUTH_SECRET_NAME names (npm start prints them; a Helm install's NOTES say how to read them)";

/** Express middleware: 401 with `WWW-Authenticate` unless the Basic credentials match. */
export function basicAuth(provider: CredentialsProvider): RequestHandler {
  return (req, res, next) => {
    const unknown = provider.current() === undefined ? provider.unavailableReason?.() : undefined;
    if (unknown !== undefined) {
      // Nothing to check the credentials against: no answer about them would be true.
      next(new UnavailableError(`the management API's credentials are not known yet: ${unknown}; the gateway reads the Secret again every few seconds: try again shortly`));
      return;
    }
    if (!basicAuthorized(provider, req.headers.authorization)) {
      const given = parseBasicAuthorization(req.headers.authorization);
      res.setHeader('WWW-Authenticate', BASIC_REALM);
      const header = req.headers.authorization;
      next(new UnauthenticatedError(given ? INVALID_CREDENTIALS
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

/** A bearer token that is the token of another room (under a secret the gateway holds), or not a room's of a room the gateway knows. */
function invalidRoomToken(schedulerName: string, roomId: string): string {
  return `invalid room token: it is not the token of room ${roomId.slice(0, 253)} of scheduler ${schedulerName.slice(0, 63)}; send the ROOMKEEPER_ROOM_TOKEN of that room's own environment (each room's token is for its own scheduler and id only), and check that the path's scheduler and room id are that room's ROOMKEEPER_SCHEDULER_NAME and ROOMKEEPER_ROOM_ID`;
}

/**
 * A token of a room token's shape, for a room the gateway knows, that no room of the scheduler
 * holds under the secrets the gateway holds: made under another secret, which only the platform's
 * operator can give back (the room's token is fixed in its pod's environment).
 */
function unheldSecretToken(schedulerName: string, roomId: string): string {
  return `invalid room token: it is not the token of room ${roomId.slice(0, 253)} of scheduler ${schedulerName.slice(0, 63)}, nor of any other room of that scheduler, under the room-token secrets this gateway holds: `
    + 'it was made under another secret, most likely the one this room was started with, which this gateway no longer holds (the room-token secret was changed without keeping the old one as the previous secret; or the operator and the gateway were given different secrets); '
    + 'the game server cannot mend it (its token is fixed in its environment): keep pinging at the usual interval, pings are recorded again once the gateway holds that secret; until then none is, so the room counts as silent and may be replaced by a new one (whose token is under the current secret). '
    + "The platform's operator gives the gateway the old secret back as roomToken.previousSecret (ROOMKEEPER_ROOM_TOKEN_PREVIOUS_SECRET; SECURITY.md, Rotation) and restarts it, or replaces the rooms started under the old secret; if the operator and the gateway hold different secrets, every new room gets this answer too, until both are given the same one. "
    + "If no secret changed, it is the token of a room of another scheduler: the URL and the token must come from one room pod's environment (its ROOMKEEPER_SCHEDULER_NAME, ROOMKEEPER_ROOM_ID and ROOMKEEPER_ROOM_TOKEN)";
}

/**
 * Added when the gateway could not tell whose the token is (a room it does not know, or its budget
 * for telling spent): it may be the room's own, made under a secret the gateway no longer holds.
 */
const UNTOLD_SECRET = "if it is this room's own ROOMKEEPER_ROOM_TOKEN, it was made under a room-token secret this gateway does not hold (changed without keeping the old one as the previous secret): keep pinging; the platform's operator gives the gateway that secret back as roomToken.previousSecret (SECURITY.md, Rotation)";

/** Why a request carries no room token: no Authorization header, or one that is not `Bearer <token>` (never echoed: it may hold a secret). */
function missingRoomToken(header: string | undefined): string {
  const send = 'send Authorization: Bearer $ROOMKEEPER_ROOM_TOKEN';
  if (header === undefined || header.trim() === '') return `missing room token: ${send}`;
  return /^Bearer\b/i.test(header.trim()) ? `missing room token: the Authorization header says Bearer but holds no token; ${send}` : `missing room token: the Authorization header is not a Bearer token (the word Bearer, a space, then the token); ${send}`;
}

export interface RoomTokenAuthOptions {
  /** Tells a token of another room from one made under a secret not held; absent: every refused token gets invalidRoomToken's words. */
  owners?: RoomTokenOwners;
  /** Where refusals are logged (bounded: rooms-refusal-log.ts). */
  refusals?: RoomsRefusalLog;
}

/** Express middleware for `/scheduler/:schedulerName/rooms/:roomId/...`: the room's token must match. */
export function roomTokenAuth(secrets: readonly string[], options: RoomTokenAuthOptions = {}): RequestHandler {
  return (req, res, next) => {
    const params = req.params as Record<string, string | undefined>;
    const schedulerName = params.schedulerName ?? '';
    const roomId = params.roomId ?? '';
    const token = bearerToken(req.headers.authorization);
    if (!verifyRoomToken(secrets, schedulerName, roomId, token)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="roomkeeper-rooms"');
      const kind = token === undefined ? undefined : options.owners?.kindOf(schedulerName, roomId, token) ?? 'unknown';
      const answer = kind === undefined ? missingRoomToken(req.headers.authorization)
        : kind === 'unheld-secret' ? unheldSecretToken(schedulerName, roomId)
          : kind === 'other-room' ? invalidRoomToken(schedulerName, roomId) : `${invalidRoomToken(schedulerName, roomId)}; ${UNTOLD_SECRET}`;
      const reason = kind === undefined ? RoomsRefusalReason.MissingToken : kind === 'unheld-secret' ? RoomsRefusalReason.UnheldSecretToken
        : kind === 'other-room' ? RoomsRefusalReason.OtherRoomToken : RoomsRefusalReason.InvalidToken;
      options.refusals?.record({ reason, schedulerName: schedulerName.slice(0, 63), roomId: roomId.slice(0, 253), answer });
      next(Object.assign(new UnauthenticatedError(answer), { refusalLogged: true }));
      return;
    }
    next();
  };
}

/** Whether a rooms API error was logged where it was made (a refused token), so the app's error path does not log it again. */
export function refusalLogged(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { refusalLogged?: unknown }).refusalLogged === true;
}
