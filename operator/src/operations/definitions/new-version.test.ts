import { lastStatusNote } from './new-version';

/** What a failed validation attempt's line says of the room, from what the room last reported (pure). */
describe('lastStatusNote', () => {
  const note = (last: Parameters<typeof lastStatusNote>[0]) => lastStatusNote(last, 'room-1', 'game');
  it.each([
    ['no room seen at all', undefined, ' (it never reported ready: check that the game server starts and pings the rooms API)'],
    ['a pod running, not ready, its game server silent', { status: 'pending' as const, reason: 'containers not ready' },
      ' (it never reported ready: check that the game server starts and pings the rooms API)'],
    ['a pod running, not ready, no ping yet (unknown)', { status: 'pending' as const, reason: 'containers not ready', pingStatus: 'unknown' as const },
      ' (it never reported ready: check that the game server starts and pings the rooms API)'],
    ['a pod that never ran', { status: 'pending' as const, reason: 'ContainerCreating: pulling image' },
      ' (it never reported ready: its pod never ran: ContainerCreating: pulling image; fix what that names, then send the change again)'],
    ['a pod never scheduled', { status: 'pending' as const, reason: 'Unschedulable: 0/3 nodes are available' },
      ' (it never reported ready: its pod was never scheduled on a node: Unschedulable: 0/3 nodes are available; check the version\'s affinity, toleration and resource requests against the cluster\'s nodes, then send the change again)'],
    ['a game server that pinged ready, its pod never Ready', { status: 'pending' as const, reason: 'containers not ready', pingStatus: 'ready' as const, lastPingAt: '2024-05-01T10:00:00Z' },
      ' (the game server pinged ready, last at 2024-05-01T10:00:00Z, but its pod never became ready: containers not ready; check the readiness probe of the version\'s containers against the game server: '
      + 'the pod\'s Events, kept about an hour after the room is deleted, show its failed probes (kubectl get events -n game --field-selector involvedObject.name=room-1); then send the change again)'],
    ['a game server that pinged occupied, its pod never Ready', { status: 'pending' as const, reason: 'containers not ready', pingStatus: 'occupied' as const, lastPingAt: '2024-05-01T10:00:00Z' },
      ' (the game server pinged occupied, last at 2024-05-01T10:00:00Z, but its pod never became ready: containers not ready; check the readiness probe of the version\'s containers against the game server: '
      + 'the pod\'s Events, kept about an hour after the room is deleted, show its failed probes (kubectl get events -n game --field-selector involvedObject.name=room-1); then send the change again)'],
    ['a ready pod whose game server reported occupied', { status: 'occupied' as const, pingStatus: 'occupied' as const, lastPingAt: '2024-05-01T10:00:00Z' },
      ' (it reported occupied; only ready validates a version: the game server must ping ready once it can take players, or set ROOMKEEPER_VALIDATION_ACCEPT_OCCUPIED (the chart\'s operator.validation.acceptOccupied) to true if it is taken by a matchmaker as soon as it starts)'],
  ])('%s', (_case, last, expected) => {
    expect(note(last)).toBe(expected);
  });
});
