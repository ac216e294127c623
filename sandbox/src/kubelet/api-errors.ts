/**
 * Reading errors thrown by @kubernetes/client-node without `instanceof` (its classes may come
 * from another realm): `ApiException` carries `code`, watch errors carry `statusCode`.
 */
export function httpStatusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; statusCode?: unknown };
  if (typeof e.code === 'number') return e.code;
  if (typeof e.statusCode === 'number') return e.statusCode;
  return undefined;
}

export function isNotFound(err: unknown): boolean {
  return httpStatusOf(err) === 404;
}

export function isConflict(err: unknown): boolean {
  return httpStatusOf(err) === 409;
}

export function errorMessage(err: unknown): string {
  if (typeof err === 'object' && err !== null) {
    const e = err as { message?: unknown; body?: unknown };
    const body = typeof e.body === 'string' ? e.body : e.body && typeof e.body === 'object' ? (e.body as { message?: unknown }).message : undefined;
    if (typeof body === 'string' && body) return body;
    if (typeof e.message === 'string') return e.message;
  }
  return String(err);
}
