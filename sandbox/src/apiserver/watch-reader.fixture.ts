import type { KubeAnswer } from './http-request.fixture';

/** Reads a watch stream over plain HTTP for tests: collects events until the stream ends or is closed. */
export interface WatchEventLine {
  type: string;
  /** The object, or a Status for an ERROR event, as parsed from the line (the API server always sends one). */
  object: KubeAnswer | undefined;
}

export interface OpenWatch {
  readonly events: WatchEventLine[];
  readonly status: Promise<number>;
  /** Resolves when the server ends the stream (or close() is called). */
  readonly ended: Promise<void>;
  close(): void;
}

export function openWatch(baseUrl: string, path: string, headers: Record<string, string> = {}): OpenWatch {
  const controller = new AbortController();
  const events: WatchEventLine[] = [];
  let resolveStatus!: (s: number) => void;
  const status = new Promise<number>((resolve) => (resolveStatus = resolve));
  const ended = (async () => {
    try {
      const res = await fetch(`${baseUrl}${path}`, { signal: controller.signal, headers: { Accept: 'application/json', ...headers } });
      resolveStatus(res.status);
      if (!res.body) return;
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          if (line) events.push(JSON.parse(line) as WatchEventLine);
        }
      }
    } catch {
      resolveStatus(0);
    }
  })();
  return { events, status, ended, close: () => controller.abort() };
}
