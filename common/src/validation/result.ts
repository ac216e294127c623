/** The outcome of validating untrusted input into a typed value. */
export interface FieldError {
  /** Kubernetes-style path, e.g. `spec.containers[0].ports[0].name`; empty for the whole document. */
  field: string;
  message: string;
}

/** `dropped`: fields of the input that were not read (unknown ones, pruned), when there were any. */
export type Result<T> = { ok: true; value: T; dropped?: string[] } | { ok: false; errors: FieldError[] };

export function ok<T>(value: T, dropped?: readonly string[]): Result<T> {
  return dropped && dropped.length > 0 ? { ok: true, value, dropped: [...dropped] } : { ok: true, value };
}

export function failed<T>(errors: FieldError[]): Result<T> {
  return { ok: false, errors };
}
