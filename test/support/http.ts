/** HTTP calls the end-to-end suites make to a stack's gateway, as a Maestro client would, and a scheduler's state for failure messages. */
import { roomToken } from '../../common/src/rooms/room-token';
import type { Stack } from './stack';

/** A management API call with the stack's credentials; the body parsed as JSON when there is one. */
export async function managementCall(stack: Stack, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown; retryAfter?: string }> {
  const res = await fetch(`${String(stack.managementUrl)}${path}`, {
    method,
    headers: { authorization: stack.authHeader, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const retryAfter = res.headers.get('retry-after') ?? undefined;
  return { status: res.status, body: text ? JSON.parse(text) as unknown : undefined, ...(retryAfter ? { retryAfter } : {}) };
}

/** A room's ping with its token (and its running matches when given), as the game server sends it; resolves to the HTTP status. */
export async function roomPing(stack: Stack, scheduler: string, room: string, status: string, runningMatches?: number): Promise<number> {
  const res = await fetch(`${stack.roomsUrl}/scheduler/${scheduler}/rooms/${room}/ping`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${roomToken(stack.config.roomTokenSecret, scheduler, room)}` },
    body: JSON.stringify({ status, timestamp: Math.floor(Date.now() / 1000), ...(runningMatches === undefined ? {} : { runningMatches }) }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Rooms and operations of a scheduler, for a failure message. */
export async function describeScheduler(stack: Stack, name: string): Promise<string> {
  const rooms = (await stack.api.listGameRooms(name)).items.map((r) => `${String(r.metadata.name)} ${r.spec.version} ${String(r.metadata.deletionTimestamp ? 'terminating' : r.status?.status)}`);
  const ops = (await stack.api.listOperations(name)).items.sort((a, b) => Date.parse(a.spec.enqueuedAt) - Date.parse(b.spec.enqueuedAt))
    .map((o) => `${o.spec.enqueuedAt} ${o.spec.definitionName} ${o.status?.status ?? 'pending'} ${JSON.stringify(o.spec.input)} ${(o.status?.executionHistory ?? []).map((h) => h.event).join(' | ')}`);
  const leaders = stack.operators.map((o) => `${o.identity}${o.isLeader ? ' (leader)' : ''}`);
  return `rooms:\n  ${rooms.join('\n  ')}\noperations:\n  ${ops.join('\n  ')}\noperators: ${leaders.join(', ')}`;
}
