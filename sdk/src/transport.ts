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

/** Requests in flight can all be aborted at once by `abortAll()` (used by `close()`). */
export class Transport {
  private readonly inFlight = new Set<AbortController>();

  constructor(private readonly options: TransportOptions) {}

  async send(method: 'PUT' | 'POST', url: string, body: unknown): Promise<HttpAnswer> {
    const controller = new AbortController();
    this.inFlight.add(controller);
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${this.options.timeoutMs} ms`)), this.options.timeoutMs);
    timer.unref();
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    try {
      const res = await this.options.fetch(url, { method, headers, body: JSON.stringify(body), signal: controller.signal });
      const retryAfter = res.headers?.get('retry-after') ?? undefined;
      return { status: res.status, body: await res.text(), ...(retryAfter !== undefined ? { retryAfter } : {}) };
    } catch (err) {
      const reason: unknown = controller.signal.aborted ? controller.signal.reason : err;
      throw reason instanceof Error ? reason : new Error(String(reason));
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(controller);
    }
  }

  abortAll(reason: Error): void {
    for (const c of this.inFlight) c.abort(reason);
    this.inFlight.clear();
  }
}
