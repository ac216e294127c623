/**
 * One HTTP request with a deadline and an abort handle, over the platform's `fetch` (Node ≥ 18),
 * so the SDK has no runtime dependencies. Tests inject their own `fetch`.
 */

export interface HttpAnswer {
  status: number;
  body: string;
  /** The answer's `Retry-After` header, if it had one. */
  retryAfter?: string;
}

export type FetchLike = (url: string, init: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal }) => Promise<{
  status: number;
  text(): Promise<string>;
  headers?: { get(name: string): string | null };
}>;

export interface TransportOptions {
  fetch: FetchLike;
  token?: string;
  timeoutMs: number;
}

/** No answer came within the request's deadline (the request was aborted). */
export class NoAnswerError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
  }
}

/**
 * An error's message with its causes: `fetch` rejects every failure to connect as `fetch failed`
 * and keeps why (`connect ECONNREFUSED 10.0.0.7:8090`, `getaddrinfo ENOTFOUND ...`) in `cause`.
 * Read by shape, not `instanceof`: fetch's errors may come from another realm.
 */
export function failureText(err: unknown): string {
  const parts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current !== undefined && current !== null; depth++) {
    const message = typeof current === 'object' ? ('message' in current && typeof current.message === 'string' ? current.message : '')
      : typeof current === 'string' || typeof current === 'number' ? String(current) : '';
    if (message !== '' && !parts.includes(message)) parts.push(message);
    current = typeof current === 'object' && 'cause' in current ? current.cause : undefined;
  }
  return parts.length > 0 ? parts.join(': ') : 'no cause given';
}

/** Requests in flight can all be aborted at once by `abortAll()` (used by `close()`). */
export class Transport {
  private readonly inFlight = new Set<AbortController>();

  constructor(private readonly options: TransportOptions) {}

  /**
   * `timeoutMs`: this request's deadline (default the transport's); `abandon`: aborting it aborts
   * the request, which then rejects with the abort's reason.
   */
  async send(method: 'PUT' | 'POST', url: string, body: unknown, timeoutMs = this.options.timeoutMs, abandon?: AbortSignal): Promise<HttpAnswer> {
    const controller = new AbortController();
    this.inFlight.add(controller);
    const onAbandon = (): void => controller.abort(abandon?.reason);
    if (abandon?.aborted) onAbandon();
    else abandon?.addEventListener('abort', onAbandon, { once: true });
    const timer = setTimeout(() => controller.abort(new NoAnswerError(timeoutMs)), timeoutMs);
    timer.unref();
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    try {
      const res = await this.options.fetch(url, { method, headers, body: JSON.stringify(body), signal: controller.signal });
      const retryAfter = res.headers?.get('retry-after') ?? undefined;
      return { status: res.status, body: await res.text(), ...(retryAfter !== undefined ? { retryAfter } : {}) };
    } catch (err) {
      const reason: unknown = controller.signal.aborted ? controller.signal.reason : err;
      throw reason instanceof Error ? reason : new Error(failureText(reason));
    } finally {
      clearTimeout(timer);
      abandon?.removeEventListener('abort', onAbandon);
      this.inFlight.delete(controller);
    }
  }

  abortAll(reason: Error): void {
    for (const c of this.inFlight) c.abort(reason);
    this.inFlight.clear();
  }
}
