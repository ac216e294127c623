/**
 * An in-memory rooms API for the SDK's fake-timer tests: records every request and answers with
 * what the test scripts. Requests can be held open; an aborted request rejects as fetch does.
 */
import type { FetchLike } from '../transport.js';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  /** Date.now() when sent (fake timers make this the fake clock). */
  at: number;
  aborted: boolean;
}

export interface FakeAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export class FakeRoomsApi {
  readonly requests: RecordedRequest[] = [];
  /** Answer of the next requests; a function sees the request. `'hang'` never answers. */
  answer: ((req: RecordedRequest) => FakeAnswer | 'hang' | 'network-error') = () => ({ status: 200, body: { success: true } });

  readonly fetch: FetchLike = (url, init) => {
    const req: RecordedRequest = { method: init.method, url, headers: init.headers, body: JSON.parse(init.body) as Record<string, unknown>, at: Date.now(), aborted: false };
    this.requests.push(req);
    const answer = this.answer(req);
    return new Promise((resolve, reject) => {
      const abort = (): void => {
        req.aborted = true;
        reject(init.signal.reason instanceof Error ? init.signal.reason : new Error('aborted'));
      };
      if (init.signal.aborted) {
        abort();
        return;
      }
      init.signal.addEventListener('abort', abort, { once: true });
      if (answer === 'hang') return;
      if (answer === 'network-error') {
        reject(new TypeError('fetch failed'));
        return;
      }
      const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
      const headers = new Headers(answer.headers);
      resolve({ status: answer.status, text: () => Promise.resolve(text), headers });
    });
  };

  pings(): RecordedRequest[] {
    return this.requests.filter((r) => r.url.endsWith('/ping'));
  }

  statuses(): unknown[] {
    return this.pings().map((r) => r.body.status);
  }
}
