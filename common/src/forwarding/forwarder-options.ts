/**
 * Reading a forwarder's settings. Configuration comes from users, so every reader tolerates bad
 * values and falls back to a default rather than throwing.
 */
import { isRecord } from '../json/is-record';
import type { ForwarderConfig } from './forwarder-types';

export const DEFAULT_FORWARD_TIMEOUT_MS = 1000;
/** The longest deadline of one forwarded event: the Scheduler CRD's `options.timeout` maximum (1 h). */
const MAX_FORWARD_TIMEOUT_MS = 3_600_000;

const HOST_PORT = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[-A-Za-z0-9.]{0,251}[A-Za-z0-9])?):([0-9]{1,5})$/;
/** grpc-js reads `<scheme>:<rest>` as a resolver scheme, so `unix:9000` would be a Unix socket. */
const GRPC_SCHEMES = new Set(['dns', 'unix', 'unix-abstract', 'ipv4', 'ipv6', 'vsock', 'xds']);

/**
 * A forwarder address is `host:port` (a DNS name, an IPv4 address or a bracketed IPv6 address,
 * and a port 1-65535): never a gRPC target with a scheme (`unix:/run/x.sock`, `dns:///h:1`),
 * which would let a scheduler's author make the gateway open local sockets.
 */
export function isHostPortAddress(address: unknown): address is string {
  if (typeof address !== 'string') return false;
  const m = HOST_PORT.exec(address);
  if (!m) return false;
  const port = Number(m[1]);
  if (port < 1 || port > 65_535) return false;
  const host = address.slice(0, address.lastIndexOf(':')).toLowerCase();
  return !GRPC_SCHEMES.has(host);
}

/**
 * A forwarder forwards only when `enable` is true. Absent means disabled, as in Maestro (a Go
 * zero value) and as the Scheduler CRD defaults it (`enable: false`).
 */
export function isForwarderEnabled(forwarder: ForwarderConfig): boolean {
  return forwarder.enable === true;
}

/** The enabled forwarders of a `forwarders` value as it came in (anything not an array of objects yields none). */
export function enabledForwarders(forwarders: unknown): ForwarderConfig[] {
  if (!Array.isArray(forwarders)) return [];
  return forwarders.filter((f: unknown): f is ForwarderConfig => isRecord(f)).filter(isForwarderEnabled);
}

/** Only the gRPC type exists; an absent type means gRPC. */
export function isGrpcForwarder(forwarder: ForwarderConfig): boolean {
  return forwarder.type === undefined || forwarder.type.toLowerCase() === 'grpc';
}

/**
 * The per-event deadline in milliseconds. Accepts a positive number or a string of digits
 * (`"500"`); anything else (absent, zero, negative, not numeric) gives `defaultMs`. Capped at
 * MAX_FORWARD_TIMEOUT_MS (a string may hold more digits than the CRD's integer maximum allows).
 */
export function forwarderTimeoutMs(forwarder: ForwarderConfig, defaultMs = DEFAULT_FORWARD_TIMEOUT_MS): number {
  const raw = forwarder.options?.timeout;
  let value: number | undefined;
  if (typeof raw === 'number') value = raw;
  else if (typeof raw === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(raw)) value = Number(raw);
  if (value === undefined || !Number.isFinite(value) || value <= 0) return defaultMs;
  return Math.min(Math.ceil(value), MAX_FORWARD_TIMEOUT_MS);
}

/** The forwarder's `options.metadata`, or an empty object when absent or not an object. */
export function forwarderMetadata(forwarder: ForwarderConfig): Record<string, unknown> {
  const metadata: unknown = forwarder.options?.metadata;
  return isRecord(metadata) ? metadata : {};
}
