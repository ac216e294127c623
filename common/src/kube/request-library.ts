/**
 * client-node's HTTP library on undici's `request` instead of its `fetch`. client-node 2.x sends
 * every API request through undici's fetch, whose WHATWG Request, Response, Headers and web
 * streams cost more CPU than the request itself: a status patch on the sandbox took about 0.3 ms
 * less CPU in the client this way (2,000 patches, 8 in flight). Everything else is client-node's:
 * the typed API classes, serialisation, authentication (headers and the TLS dispatcher set on the
 * request context by `applySecurityAuthentication`), so only the bytes' way changes.
 *
 * What differs from client-node's fetch, on purpose:
 * - a request that gets no answer fails with `KubeTransportError` (its `cause` the socket error,
 *   whose `code` `isApiUnavailable` reads), not with `TypeError: fetch failed`; a body cut off
 *   mid-answer fails the same way. An aborted or timed-out request keeps undici's `AbortError` or
 *   `TimeoutError`;
 * - no `Accept-Encoding` is sent, so the API server does not compress answers (large lists): it
 *   saves the CPU of compressing and decompressing on both sides, at the cost of bytes on the wire;
 * - redirects are not followed (the API server does not send them).
 */
import { Readable } from 'node:stream';
import { ResponseContext, type PromiseHttpLibrary, type RequestContext, type ResponseBody } from '@kubernetes/client-node';
import { request, type Dispatcher } from 'undici';

/**
 * Whether a request failed in this process before it left: no file descriptor left for its socket
 * (EMFILE for the process, ENFILE for the machine), whatever the API server's state.
 */
export function outOfFileDescriptors(error: string): boolean {
  return /\bE[MN]FILE\b/.test(error);
}

/** A request to the Kubernetes API server that got no (whole) answer; `cause` is the socket's error. */
class KubeTransportError extends Error {
  constructor(cause: unknown) {
    // Duck-typed: the socket's error may come from another realm (a jest VM).
    const said = (cause as { message?: unknown; code?: unknown } | null)?.message;
    // undici's words for a request failed because its pool was replaced (shared-dispatcher.ts).
    const destroyed = (cause as { code?: unknown } | null)?.code === 'UND_ERR_DESTROYED';
    const why = destroyed ? 'its connection was closed, as the connections to an API server that stopped answering are replaced' : typeof said === 'string' ? said : String(cause);
    // EMFILE/ENFILE: the request never left this process (diagnosis.ts says what to do).
    const local = outOfFileDescriptors(why) ? ' (this process has no file descriptor left for a connection; the request was not sent)' : '';
    super(`no answer from the Kubernetes API server: ${why}${local}`, { cause });
    this.name = 'KubeTransportError';
  }
}

/** An abort or a timeout stays what it is (callers tell them by name); any other failure is a transport failure. */
function transportFailure(err: unknown): unknown {
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'TimeoutError' ? err : new KubeTransportError(err);
}

function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

export class RequestHttpLibrary implements PromiseHttpLibrary {
  async send(ctx: RequestContext): Promise<ResponseContext> {
    const body = ctx.getBody();
    if (body !== undefined && typeof body !== 'string') throw new Error(`client-node sent a ${body.constructor.name} body; only JSON text bodies are expected`);
    const answer = await request(ctx.getUrl(), {
      method: ctx.getHttpMethod() as Dispatcher.HttpMethod,
      headers: ctx.getHeaders(),
      body,
      signal: ctx.getSignal(),
      dispatcher: ctx.getDispatcher(),
    }).catch((err: unknown) => {
      throw transportFailure(err);
    });
    const stream = answer.body;
    return new ResponseContext(answer.statusCode, flatHeaders(answer.headers), {
      text: () => stream.text().catch((err: unknown) => {
        throw transportFailure(err);
      }),
      binary: async () => Buffer.from(await stream.arrayBuffer().catch((err: unknown) => {
        throw transportFailure(err);
      })),
      stream: () => Readable.toWeb(stream) as ReturnType<ResponseBody['stream']>,
    });
  }
}
