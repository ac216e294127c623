/** The outcome of validating untrusted input into a typed value. */
export interface FieldError {
  /** Kubernetes-style path, e.g. `spec.containers[0].ports[0].name`; empty for the whole document. */
  field: string;
  message: string;
}

export type Result<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function failed<T>(errors: FieldError[]): Result<T> {
  return { ok: false, errors };
}
