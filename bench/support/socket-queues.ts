/**
 * What sits unread on a local TCP port's connections, from `ss` (Linux): on the server's side,
 * requests its process has not read yet and connections not yet accepted; on the clients' side,
 * answers their process has not read yet. Says which end of a slow exchange is behind.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export interface SocketQueues {
  /** The server's established connections with bytes unread by the server, and those bytes. */
  serverUnread: { sockets: number; bytes: number };
  /** The clients' connections with bytes (answers) unread by the clients, and those bytes. */
  clientUnread: { sockets: number; bytes: number };
  /** Connections waiting to be accepted, and the listen backlog. */
  acceptQueue: number;
  backlog: number;
}

const portOf = (address: string) => Number(address.slice(address.lastIndexOf(':') + 1));

/** The queues of `port` on this machine, or undefined where `ss` is missing or fails. */
export async function socketQueues(port: number): Promise<SocketQueues | undefined> {
  const ss = (...args: string[]) => promisify(execFile)('ss', args, { maxBuffer: 64 * 1024 * 1024 }).then((r) => r.stdout);
  try {
    const filter = `( sport = :${port} or dport = :${port} )`;
    const [established, listening] = await Promise.all([ss('-tnH', 'state', 'established', filter), ss('-ltnH', `( sport = :${port} )`)]);
    const out: SocketQueues = { serverUnread: { sockets: 0, bytes: 0 }, clientUnread: { sockets: 0, bytes: 0 }, acceptQueue: 0, backlog: 0 };
    for (const line of established.split('\n')) {
      const [recvQ, , local] = line.trim().split(/\s+/);
      const unread = Number(recvQ);
      if (local === undefined || !(unread > 0)) continue;
      const side = portOf(local) === port ? out.serverUnread : out.clientUnread;
      side.sockets++;
      side.bytes += unread;
    }
    const [, recvQ, sendQ] = listening.trim().split(/\s+/);
    out.acceptQueue = Number(recvQ) || 0;
    out.backlog = Number(sendQ) || 0;
    return out;
  } catch {
    return undefined;
  }
}

export function describeSocketQueues(q: SocketQueues | undefined): string {
  if (!q) return 'socket queues not read (no ss)';
  return `unread by the gateway ${q.serverUnread.bytes} B on ${q.serverUnread.sockets} sockets, accept queue ${q.acceptQueue}/${q.backlog}; unread by the game servers ${q.clientUnread.bytes} B on ${q.clientUnread.sockets} sockets`;
}
