import { desiredRooms, type DesiredRoomsInput } from './desired-count';
import { summarizeFleet } from './fleet-summary';
import { roomView } from './test-rooms';
import { DEFAULT_ROOM_TIMEOUTS, type Autoscaling, type RoomView } from './types';

const S = 1000;
const NOW = 1_000_000 * S;

const occupancy = (readyTarget: number, extra: Partial<Autoscaling> = {}, downThreshold?: number): Autoscaling => ({
  enabled: true,
  min: 1,
  max: 10,
  cooldown: 0,
  policy: { type: 'roomOccupancy', parameters: { roomOccupancy: { readyTarget, ...(downThreshold === undefined ? {} : { downThreshold }) } } },
  ...extra,
});
const buffer = (amount: number, extra: Partial<Autoscaling> = {}): Autoscaling => ({
  enabled: true,
  min: 1,
  max: -1,
  cooldown: 0,
  policy: { type: 'fixedBuffer', parameters: { fixedBuffer: { amount } } },
  ...extra,
});
const input = (over: Partial<DesiredRoomsInput> & { ready: number; occupied: number }): DesiredRoomsInput => ({
  roomsReplicas: 2,
  counts: { ready: over.ready, occupied: over.occupied },
  available: over.available ?? over.ready + over.occupied,
  now: NOW,
  ...over,
});

describe('desiredRooms', () => {
  const cases: { name: string; in: DesiredRoomsInput; desired: number; downscaleAllowed: boolean; recordDownscale: boolean; target?: number }[] = [
    { name: 'no autoscaling -> roomsReplicas', in: input({ ready: 5, occupied: 5 }), desired: 2, downscaleAllowed: true, recordDownscale: false },
    {
      name: 'autoscaling disabled -> roomsReplicas',
      in: input({ ready: 0, occupied: 9, autoscaling: { ...occupancy(0.5), enabled: false } }),
      desired: 2, downscaleAllowed: true, recordDownscale: false,
    },
    { name: 'roomsReplicas missing -> 0', in: input({ ready: 1, occupied: 0, roomsReplicas: undefined }), desired: 0, downscaleAllowed: true, recordDownscale: false },
    { name: 'roomOccupancy scale up', in: input({ ready: 1, occupied: 3, autoscaling: occupancy(0.5) }), desired: 6, downscaleAllowed: true, recordDownscale: false },
    {
      name: 'allocated rooms count as occupied (Maestro)',
      in: { ...input({ ready: 1, occupied: 1, autoscaling: occupancy(0.5) }), counts: { ready: 1, occupied: 1, allocated: 2 }, available: 4 },
      desired: 6, downscaleAllowed: true, recordDownscale: false,
    },
    {
      name: 'roomOccupancy docs example: 80 occupied of 100, readyTarget 0.5 -> 160',
      in: input({ ready: 20, occupied: 80, autoscaling: occupancy(0.5, { max: -1 }) }),
      desired: 160, downscaleAllowed: true, recordDownscale: false,
    },
    { name: 'roomOccupancy clamped to max', in: input({ ready: 0, occupied: 8, autoscaling: occupancy(0.5) }), desired: 10, downscaleAllowed: true, recordDownscale: false },
    { name: 'roomOccupancy raised to min', in: input({ ready: 0, occupied: 0, autoscaling: occupancy(0.5, { min: 3 }) }), desired: 3, downscaleAllowed: true, recordDownscale: false },
    { name: 'roomOccupancy equal to available: no downscale', in: input({ ready: 2, occupied: 2, autoscaling: occupancy(0.5) }), desired: 4, downscaleAllowed: true, recordDownscale: false },
    {
      name: 'roomOccupancy downscale allowed (1/10 <= 0.99)',
      in: input({ ready: 10, occupied: 0, autoscaling: occupancy(0.5) }),
      desired: 1, downscaleAllowed: true, recordDownscale: true,
    },
    {
      name: 'roomOccupancy downscale held by the threshold',
      // desired = ceil(4/0.5) = 8 < 9 available; desiredFreeSlots = ceil(8*0.5) = 4; 4/5 = 0.8 > 0.7
      in: input({ ready: 5, occupied: 4, autoscaling: occupancy(0.5, {}, 0.7) }),
      desired: 9, downscaleAllowed: false, recordDownscale: false, target: 8,
    },
    {
      name: 'roomOccupancy downscale with no free slot is held (ratio infinite)',
      in: input({ ready: 0, occupied: 4, available: 9, autoscaling: occupancy(0.5) }),
      desired: 9, downscaleAllowed: false, recordDownscale: false, target: 8,
    },
    {
      name: 'a downscale held by the threshold still comes down to max, which is a ceiling (rooms added above it by an add-rooms)',
      // desired = ceil(5/0.5) = 10, capped at max 5 < 8 available; desiredFreeSlots = ceil(5*0.5) = 3; 3/3 = 1 > 0.99
      in: input({ ready: 3, occupied: 5, autoscaling: occupancy(0.5, { max: 5 }) }),
      desired: 5, downscaleAllowed: true, recordDownscale: true, target: 5,
    },
    {
      name: 'a downscale held by the cooldown still comes down to max',
      in: input({ ready: 9, occupied: 1, autoscaling: buffer(2, { cooldown: 10, max: 6 }), lastDownscaleAt: NOW - 5 * S }),
      desired: 6, downscaleAllowed: true, recordDownscale: true, target: 3,
    },
    {
      name: 'downscale held by the cooldown',
      in: input({ ready: 10, occupied: 0, autoscaling: occupancy(0.5, { cooldown: 60 }), lastDownscaleAt: NOW - 30 * S }),
      desired: 10, downscaleAllowed: false, recordDownscale: false, target: 1,
    },
    {
      name: 'downscale at exactly the end of the cooldown is still held',
      in: input({ ready: 10, occupied: 0, autoscaling: occupancy(0.5, { cooldown: 60 }), lastDownscaleAt: NOW - 60 * S }),
      desired: 10, downscaleAllowed: false, recordDownscale: false, target: 1,
    },
    {
      name: 'downscale after the cooldown',
      in: input({ ready: 10, occupied: 0, autoscaling: occupancy(0.5, { cooldown: 60 }), lastDownscaleAt: NOW - 61 * S }),
      desired: 1, downscaleAllowed: true, recordDownscale: true,
    },
    {
      name: 'cooldown does not hold a scale up',
      in: input({ ready: 0, occupied: 3, autoscaling: occupancy(0.5, { cooldown: 600 }), lastDownscaleAt: NOW - S }),
      desired: 6, downscaleAllowed: true, recordDownscale: false,
    },
    { name: 'fixedBuffer', in: input({ ready: 1, occupied: 4, autoscaling: buffer(3) }), desired: 7, downscaleAllowed: true, recordDownscale: false },
    { name: 'fixedBuffer clamped to max', in: input({ ready: 1, occupied: 4, autoscaling: buffer(3, { max: 5 }) }), desired: 5, downscaleAllowed: true, recordDownscale: false },
    { name: 'fixedBuffer downscale', in: input({ ready: 9, occupied: 1, autoscaling: buffer(2) }), desired: 3, downscaleAllowed: true, recordDownscale: true },
    {
      name: 'fixedBuffer downscale held by the cooldown',
      in: input({ ready: 9, occupied: 1, autoscaling: buffer(2, { cooldown: 10 }), lastDownscaleAt: NOW - 5 * S }),
      desired: 10, downscaleAllowed: false, recordDownscale: false, target: 3,
    },
    {
      name: 'unusable policy keeps the fleet',
      in: input({ ready: 3, occupied: 1, autoscaling: { enabled: true, min: 1, max: 10, policy: { type: 'roomOccupancy' } } }),
      desired: 4, downscaleAllowed: false, recordDownscale: false,
    },
  ];
  it.each(cases)('$name', ({ in: given, desired, downscaleAllowed, recordDownscale, target }) => {
    const result = desiredRooms(given);
    expect(result).toMatchObject({ desired, downscaleAllowed, recordDownscale, target: target ?? desired });
    expect(result.reason).toEqual(expect.any(String));
  });

  it('says why, in words', () => {
    expect(desiredRooms(input({ ready: 0, occupied: 8, autoscaling: occupancy(0.5) })).reason)
      .toBe('roomOccupancy: ceil(8 occupied / (1 - 0.5)) = 16, capped at max 10');
    expect(desiredRooms(input({ ready: 10, occupied: 0, autoscaling: occupancy(0.5, { cooldown: 60 }), lastDownscaleAt: NOW - 30 * S })).reason)
      .toBe('roomOccupancy: ceil(0 occupied / (1 - 0.5)) = 0, raised to min 1; downscale held: cooldown of 60s has 30s left');
    expect(desiredRooms(input({ ready: 1, occupied: 0, autoscaling: { enabled: true, min: 1, max: 2, policy: { type: 'fixedBuffer' } } })).error)
      .toBe('fixedBuffer.amount must be a number >= 0');
  });

  it('computes with readyTarget as written, not as binary floating point holds it (1 - 0.8 is 0.19999999999999996 there)', () => {
    expect(desiredRooms(input({ ready: 0, occupied: 40, autoscaling: occupancy(0.8, { max: -1 }) })).reason).toBe('roomOccupancy: ceil(40 occupied / (1 - 0.8)) = 200');
    expect(desiredRooms(input({ ready: 0, occupied: 3, autoscaling: occupancy(0.9, { max: -1 }) })).reason).toBe('roomOccupancy: ceil(3 occupied / (1 - 0.9)) = 30');
    // 10 rooms × 0.3 is 3.0000000000000004 in floating point: the downscale gate wants 3 free slots, not 4.
    const gate = desiredRooms(input({ ready: 3, occupied: 7, autoscaling: occupancy(0.3, { max: -1 }, 0.99) }));
    expect(gate.reason).toMatch(/^roomOccupancy: ceil\(7 occupied \/ \(1 - 0\.3\)\) = 10/);
  });

  // Maestro's e2e (autoscaling_test.go): readyTarget 0.5, min 1, max 10; every ready room turns
  // occupied between two health-controller runs, and the rooms added come up ready.
  it('scales up as Maestro e2e: 1/1 -> 2/2 -> 4/4 -> 2/8 -> 0/10', () => {
    const autoscaling = occupancy(0.5);
    let ready = 0;
    let occupied = 0;
    const seen: string[] = [];
    const cycle = (): void => {
      const { desired } = desiredRooms({ roomsReplicas: 0, autoscaling, counts: { ready, occupied }, available: ready + occupied, now: NOW });
      const available = ready + occupied;
      if (desired > available) ready += desired - available;
    };
    cycle(); // the first room, at min
    expect([ready, occupied]).toEqual([1, 0]);
    for (let i = 0; i < 6; i++) {
      occupied += ready; // players take every ready room
      ready = 0;
      cycle();
      seen.push(`${ready}/${occupied}`);
    }
    expect(seen).toEqual(['1/1', '2/2', '4/4', '2/8', '0/10', '0/10']);
  });

  it('scales ten idle ready rooms down to one, once the cooldown allows', () => {
    const autoscaling = occupancy(0.5, { cooldown: 30 });
    let ready = 10;
    let lastDownscaleAt: number | undefined = NOW - 10 * S;
    const run = (now: number): void => {
      const result = desiredRooms({ autoscaling, counts: { ready, occupied: 0 }, available: ready, now, lastDownscaleAt });
      if (result.recordDownscale) lastDownscaleAt = now;
      if (result.desired < ready) ready = result.desired;
    };
    run(NOW);
    expect(ready).toBe(10);
    run(NOW + 19 * S);
    expect(ready).toBe(10);
    run(NOW + 21 * S);
    expect(ready).toBe(1);
    expect(lastDownscaleAt).toBe(NOW + 21 * S);
    run(NOW + 100 * S);
    expect(ready).toBe(1);
  });
});

describe('desiredRooms under the per-scheduler room limit (issue 12 M4)', () => {
  it('refuses a roomsReplicas written past the gateway (kubectl) above the limit: keeps the fleet, and says which field to fix', () => {
    const d = desiredRooms(input({ ready: 3, occupied: 2, roomsReplicas: 2 ** 31 - 1, maxRooms: 100 }));
    expect(d.desired).toBe(5);
    expect(d.target).toBe(5);
    expect(d.downscaleAllowed).toBe(false);
    expect(d.error).toBe('spec.roomsReplicas 2147483647 is above 100');
    expect(d.reason).toBe('spec.roomsReplicas 2147483647 is above 100, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER): '
      + 'the spec is refused, as the gateway refuses it, and the fleet keeps its 5 rooms; set it to at most 100');
    expect(desiredRooms(input({ ready: 0, occupied: 0, roomsReplicas: 100, maxRooms: 100 })).desired).toBe(100);
  });

  it('keeps the count last decided, not the current fleet, while the spec is refused', () => {
    const d = desiredRooms(input({ ready: 6, occupied: 1, roomsReplicas: 20_000, maxRooms: 100, lastDesired: 5 }));
    expect(d.desired).toBe(5);
    expect(d.target).toBe(5);
    expect(d.reason).toBe('spec.roomsReplicas 20000 is above 100, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER): '
      + 'the spec is refused, as the gateway refuses it, and the fleet keeps the desired count last decided, 5 rooms; set it to at most 100');
    const policy = desiredRooms(input({ ready: 7, occupied: 0, autoscaling: { ...buffer(1), policy: { type: 'fixedBuffer', parameters: {} } }, lastDesired: 4 }));
    expect(policy.error).toBeDefined();
    expect(policy.desired).toBe(4);
    expect(policy.reason).toMatch(/; keeping the desired count last decided, 4 rooms$/);
  });

  it('keeps the fleet when the active version\'s autoscaling.min is above a limit lowered since, and says to fix the spec or the limit', () => {
    const d = desiredRooms(input({ ready: 4, occupied: 0, autoscaling: buffer(10, { min: 101, max: 200 }), maxRooms: 100 }));
    expect(d.desired).toBe(4);
    expect(d.downscaleAllowed).toBe(false);
    expect(d.error).toBe("the active version's autoscaling.min 101 is above 100");
    expect(d.reason).toBe("the active version's autoscaling.min 101 is above 100, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER), "
      + 'which was lowered after that version was made: no count is decided and the fleet keeps its 4 rooms; '
      + 'set spec.autoscaling.min to at most 100 (a new version), or raise ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER to at least 101');
  });

  it('reads autoscaling.max -1 (unbounded) as the limit', () => {
    const d = desiredRooms(input({ ready: 0, occupied: 500, autoscaling: buffer(10), maxRooms: 300 }));
    expect(d.desired).toBe(300);
    expect(d.reason).toMatch(/^fixedBuffer: 500 occupied \+ 10 = 510; capped at 300, the most rooms one scheduler may have$/);
  });

  it('changes nothing below the limit', () => {
    expect(desiredRooms(input({ ready: 5, occupied: 5, maxRooms: 100 }))).toEqual(desiredRooms(input({ ready: 5, occupied: 5 })));
  });
});

describe('desiredRooms for multi-match rooms (Maestro §6, allocated counted as running)', () => {
  const multi = (counts: DesiredRoomsInput['counts'], available: number, autoscaling: Autoscaling, maxMatches = 3): DesiredRoomsInput => ({
    autoscaling, counts, available, now: NOW, maxMatches,
  });
  const cases: { name: string; in: DesiredRoomsInput; desired: number; target?: number; downscaleAllowed: boolean }[] = [
    {
      name: '2 running matches of 6 slots: ceil(ceil(2 / 0.5) / 3) = 2',
      in: multi({ ready: 1, active: 1, occupied: 0, matches: 2, matchSlots: 6 }, 2, occupancy(0.5)),
      desired: 2, downscaleAllowed: true,
    },
    {
      name: '3 full rooms (9 matches): ceil(ceil(9 / 0.5) / 3) = 6',
      in: multi({ ready: 0, occupied: 3, matches: 9, matchSlots: 9 }, 3, occupancy(0.5)),
      desired: 6, downscaleAllowed: true,
    },
    {
      name: 'open allocations count as running matches: 1 + 2 allocations = 3 -> 2 rooms',
      in: multi({ ready: 0, allocated: 1, active: 1, occupied: 0, matches: 3, matchSlots: 6 }, 2, occupancy(0.5)),
      desired: 2, downscaleAllowed: true,
    },
    {
      name: '10 idle rooms scale down to min 1 (desired free slots ceil(1*3*0.5) = 2 / 30 free)',
      in: multi({ ready: 10, occupied: 0, matches: 0, matchSlots: 30 }, 10, occupancy(0.5)),
      desired: 1, downscaleAllowed: true,
    },
    {
      name: 'downscale held by the threshold: desired ceil(ceil(6 / 0.7) / 3) = 3, free slots ceil(3*3*0.3) = 3 / 6 > 0.4',
      in: multi({ ready: 2, occupied: 2, matches: 6, matchSlots: 12 }, 4, occupancy(0.3, {}, 0.4)),
      desired: 4, target: 3, downscaleAllowed: false,
    },
    {
      // 4 rooms each running 1 match with an open allocation (2 of 3 counted) and 1 fresh room:
      // desired ceil(ceil(8 / 0.8) / 3) = 4 of 5. The held-back slots are not free: the allocate API
      // offers only the fresh room's 3, so ceil(4*3*0.2) = 3 / 3 > 0.99 holds the downscale (counting
      // them, 3 / 7, would remove the one room it can offer a slot of).
      name: 'downscale held: slots held back behind open allocations are not free slots',
      in: multi({ ready: 1, allocated: 4, occupied: 0, matches: 8, matchSlots: 15, freeSlots: 3 }, 5, occupancy(0.2)),
      desired: 5, target: 4, downscaleAllowed: false,
    },
    {
      name: 'fixedBuffer counts rooms in use (occupied, active, allocated) + amount',
      in: multi({ ready: 1, active: 2, allocated: 1, occupied: 1, matches: 7, matchSlots: 15 }, 5, buffer(2)),
      desired: 6, downscaleAllowed: true,
    },
  ];
  it.each(cases)('$name', ({ in: given, desired, target, downscaleAllowed }) => {
    expect(desiredRooms(given)).toMatchObject({ desired, target: target ?? desired, downscaleAllowed });
  });

  it('says the match formula in words', () => {
    expect(desiredRooms(multi({ ready: 0, occupied: 3, matches: 9, matchSlots: 9 }, 3, occupancy(0.5))).reason)
      .toBe('roomOccupancy: ceil(ceil(9 running matches / (1 - 0.5)) / 3 matches per room) = 6');
  });

  // A scripted sequence on the fleet summary: before each health run, every room that is not full
  // starts one more match; the rooms added come up ready (readyTarget 0.5, min 1, max 10, maxMatches 3).
  it('grows a multi-match fleet as the formulas say: 1, 1, 2, 3, 4, 6, 9, 10 rooms', () => {
    const autoscaling = occupancy(0.5);
    let matches: number[] = [];
    const status = (m: number): RoomView['status'] => (m === 0 ? 'ready' : m >= 3 ? 'occupied' : 'active');
    const run = (): void => {
      const views = matches.map((m, i) => roomView(`r${i}`, { status: status(m), runningMatches: m, lastPingAt: NOW }));
      const { counts, available } = summarizeFleet(views, NOW, DEFAULT_ROOM_TIMEOUTS, 3);
      const { desired } = desiredRooms({ autoscaling, counts, available: available.length, now: NOW, maxMatches: 3 });
      while (matches.length < desired) matches.push(0);
    };
    const sizes: number[] = [];
    run();
    sizes.push(matches.length);
    for (let i = 0; i < 7; i++) {
      matches = matches.map((m) => Math.min(3, m + 1));
      run();
      sizes.push(matches.length);
    }
    expect(sizes).toEqual([1, 1, 2, 3, 4, 6, 9, 10]);
  });
});
