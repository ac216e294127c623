/** The gateway's management API over real HTTP, as a user would call it. */
class ManagementApiError extends Error {
  constructor(readonly status: number, readonly body: string, what: string) {
    super(`${what}: HTTP ${status} ${body.slice(0, 300)}`);
    this.name = 'ManagementApiError';
  }
}

export class ManagementClient {
  private readonly auth: string;
  constructor(private readonly baseUrl: string, username: string, password: string) {
    this.auth = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { authorization: this.auth, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new ManagementApiError(res.status, text, `${method} ${path}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  createScheduler(body: Record<string, unknown>): Promise<unknown> {
    return this.request('POST', '/schedulers', body);
  }

  addRooms(scheduler: string, amount: number): Promise<{ operationId: string }> {
    return this.request('POST', `/schedulers/${scheduler}/add-rooms`, { amount });
  }
}
