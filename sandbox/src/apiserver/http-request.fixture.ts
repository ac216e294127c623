/** Plain HTTP requests to a sandbox, for tests that check exact status codes, headers and bodies. */
export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON; undefined when it is not JSON. */
  json: KubeAnswer | undefined;
}

/**
 * The fields of an API server answer (an object, a list, a Status, a discovery document) that the
 * tests read; any answer has only some of them, so each is optional.
 */
export interface KubeAnswer {
  kind?: string;
  apiVersion?: string;
  message?: string;
  reason?: string;
  details?: { causes?: { reason?: string; field?: string; message?: string }[] };
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; continue?: string };
  spec?: { [field: string]: unknown; containers?: Record<string, unknown>[] };
  status?: { conditions?: { type: string; status: string }[] };
  data?: Record<string, string>;
  note?: string;
  items?: KubeAnswer[];
  resources?: unknown[];
  preferredVersion?: unknown;
  versions?: { version: string; resources: { resource: string }[] }[];
  gitVersion?: string;
}

export async function request(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const init: RequestInit = { method, headers: { Accept: 'application/json', ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['Content-Type'] ??= 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, init);
  const text = await res.text();
  let json: KubeAnswer | undefined;
  try {
    json = JSON.parse(text) as KubeAnswer;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}
