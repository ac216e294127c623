/**
 * Reading a forwarder's settings. Configuration comes from users, so every reader tolerates bad
 * values and falls back to a default rather than throwing.
 */
import type { ForwarderConfig } from './forwarder-types';

export const DEFAULT_FORWARD_TIMEOUT_MS = 1000;

/**
 * A forwarder forwards only when `enable` is true. Absent means disabled, as in Maestro (a Go
 * zero value) and as the Scheduler CRD defaults it (`enable: false`).
 */
export function isForwarderEnabled(forwarder: ForwarderConfig): boolean {
  return forwarder.enable === true;
}

/** Only the gRPC type exists; an absent type means gRPC. */
export function isGrpcForwarder(forwarder: ForwarderConfig): boolean {
  return forwarder.type === undefined || forwarder.type.toLowerCase() === 'grpc';
}

/**
 * The per-event deadline in milliseconds. Accepts a positive number or a string of digits
 * (`"500"`); anything else (absent, zero, negative, not numeric) gives `defaultMs`.
 */
export function forwarderTimeoutMs(forwarder: ForwarderConfig, defaultMs = DEFAULT_FORWARD_TIMEOUT_MS): number {
  const raw = forwarder.options?.timeout;
  let value: number | undefined;
  if (typeof raw === 'number') value = raw;
  else if (typeof raw === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(raw)) value = Number(raw);
  if (value === undefined || !Number.isFinite(value) || value <= 0) return defaultMs;
  return Math.ceil(value);
}

/** The forwarder's `options.metadata`, or an empty object when absent or not an object. */
export function forwarderMetadata(forwarder: ForwarderConfig): Record<string, unknown> {
  const metadata = forwarder.options?.metadata;
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return {};
  return metadata;
}
