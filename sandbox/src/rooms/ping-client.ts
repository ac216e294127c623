/**
 * Sends room pings over keep-alive connections, so 10,000 rooms pinging every few seconds reuse
 * a bounded pool of sockets instead of opening one connection per ping.
 */
import http from 'node:http';
import https from 'node:https';
import type { LivePingStatus } from '../../../common/src/rooms/room-status';
import { parsePingAnswer } from '../../../sdk/src/index';

export interface PingRequest {
  url: string;
  status: LivePingStatus;
  token?: string;
  /** Unix seconds. */
  timestamp: number;
}

export interface PingResult {
  /** A 2xx answer `{"success":true}`: the rooms API recorded the ping. */
  ok: boolean;
  /** HTTP status, absent when the request failed before an answer. */
  statusCode?: number;
  error?: string;
}

export interface PingClientOptions {
  maxSockets?: number;
  timeoutMs?: number;
  /**
   * An idle pooled socket is closed after this (default 30 s), well before the rooms API closes
   * it (its keep-alive timeout is 65 s), so a ping is never sent on a connection the server is
   * closing at that moment. The server's `Keep-Alive: timeout` hint is honoured when shorter.
   */
  idleSocketTimeoutMs?: number;
}

export class PingClient {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  private readonly timeoutMs: number;

  constructor(options: PingClientOptions = {}) {
    const maxSockets = options.maxSockets ?? 64;
    // Without `timeout` Node's agent keeps an idle socket until the server closes it, and ignores
    // the server's keep-alive hint. Seen in CI (simulation and gateway in one process): after a
    // stall of the event loop, a burst of pings went out on sockets whose server side timed out in
    // the same turn, and 21 pings failed at once with `socket hang up`.
    const agentOptions = { keepAlive: true, maxSockets, maxFreeSockets: maxSockets, timeout: options.idleSocketTimeoutMs ?? 30_000 };
    this.httpAgent = new http.Agent(agentOptions);
    this.httpsAgent = new https.Agent(agentOptions);
    this.timeoutMs = options.timeoutMs ?? 5000;
  }

  send(ping: PingRequest): Promise<PingResult> {
    let url: URL;
    try {
      url = new URL(ping.url);
    } catch {
      return Promise.resolve({ ok: false, error: `invalid URL ${ping.url}` });
    }
    const body = JSON.stringify({ status: ping.status, timestamp: ping.timestamp });
    const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    if (ping.token) headers.authorization = `Bearer ${ping.token}`;
    const isHttps = url.protocol === 'https:';
    return new Promise<PingResult>((resolve) => {
      let settled = false;
      const done = (result: PingResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve(result);
      };
      const req = (isHttps ? https : http).request(url, {
        method: 'PUT', headers, agent: isHttps ? this.httpsAgent : this.httpAgent,
      }, (res) => {
        const statusCode = res.statusCode ?? 0;
        let answer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (answer.length < MAX_ANSWER_CHARS) answer += chunk;
        });
        res.on('end', () => done(outcome(statusCode, answer)));
        res.on('error', (err) => done({ ok: false, statusCode, error: err.message }));
      });
      // The deadline counts from now, the wait for a free socket included: a ping stuck behind
      // others fails (and is counted) instead of arriving minutes late. A plain timer, not
      // `AbortSignal.timeout`: at 1,500 pings a second the signal costs a quarter of this client's CPU.
      const deadline = setTimeout(() => {
        done({ ok: false, error: `no answer within ${this.timeoutMs} ms (waiting for a socket included)` });
        req.destroy();
      }, this.timeoutMs);
      req.on('error', (err) => done({ ok: false, error: err.message }));
      req.end(body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

/** Answers longer than this are not read further (a ping's answer is a few dozen characters). */
const MAX_ANSWER_CHARS = 4096;

/** A 2xx `{"success":false}` is an answer, but the rooms API did not record the ping (an unknown room). */
function outcome(statusCode: number, answer: string): PingResult {
  if (statusCode < 200 || statusCode >= 300) return { ok: false, statusCode };
  if (parsePingAnswer(answer)?.success === true) return { ok: true, statusCode };
  return { ok: false, statusCode, error: `answered ${answer.slice(0, 200)}: the ping was not recorded` };
}
