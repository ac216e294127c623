import {
  describeInputErrors,
  OPERATION_INPUTS,
  parseOperationInput,
  ROOM_ID_MESSAGE,
  REQUEST_BOUNDS,
  schedulerDefinitionInput,
  specOfDefinitionInput,
  type InputBounds,
} from './operation-inputs';
import { knownDefinitionNames } from '../resources/operation-names';
import type { SchedulerSpec } from '../generated/resources';
import { schedulerObject } from '../../../test/support/scheduler-object';

const OPERATOR_BOUNDS: InputBounds = { maxAmount: 20_000, maxRoomIds: 40_000 };

describe('operation inputs', () => {
  test('every known definition has its parser', () => {
    expect(Object.keys(OPERATION_INPUTS).sort()).toEqual([...knownDefinitionNames].sort());
  });

  describe('add_rooms', () => {
    test.each([
      ['an integer', { amount: 3 }, { amount: 3 }],
      ['a string of digits', { amount: '7' }, { amount: 7 }],
      ['the bound itself', { amount: 10_000 }, { amount: 10_000 }],
      ['a reason', { amount: 1, reason: 'autoscale' }, { amount: 1, reason: 'autoscale' }],
      ['attempt fields', { amount: 1, attempt: 2, previousAttempt: 'op-1', attemptNote: 'Attempt 2' }, { amount: 1, attempt: 2, previousAttempt: 'op-1', attemptNote: 'Attempt 2' }],
    ])('accepts %s', (_name, input, value) => {
      expect(parseOperationInput('add_rooms', input, REQUEST_BOUNDS)).toEqual({ ok: true, value });
    });

    test.each([
      ['no amount', {}, 'is a required field'],
      ['zero', { amount: 0 }, 'must be between 1 and 10000'],
      ['a negative amount', { amount: -1 }, 'must be between 1 and 10000'],
      ['a fraction', { amount: 1.5 }, 'must be an integer'],
      ['a word', { amount: 'many' }, 'must be an integer'],
      ['one more than a request may ask', { amount: 10_001 }, 'must be between 1 and 10000'],
    ])('refuses %s, naming the field', (_name, input, message) => {
      expect(parseOperationInput('add_rooms', input, REQUEST_BOUNDS)).toEqual({ ok: false, errors: [{ field: 'amount', message }] });
    });

    test('the operator\'s bounds are the caller\'s: a health check may add more than one request may', () => {
      expect(parseOperationInput('add_rooms', { amount: 15_000 }, OPERATOR_BOUNDS)).toEqual({ ok: true, value: { amount: 15_000 } });
    });
  });

  describe('remove_rooms', () => {
    test.each([
      ['roomsIds (the one spelling written)', { roomsIds: ['a', 'b'] }],
      ['rooms_ids (Maestro\'s proto name)', { rooms_ids: ['a', 'b'] }],
    ])('reads %s as roomsIds', (_name, input) => {
      expect(parseOperationInput('remove_rooms', input, REQUEST_BOUNDS)).toEqual({ ok: true, value: { roomsIds: ['a', 'b'] } });
    });

    test('reads roomIds (an older spelling) as roomsIds', () => {
      expect(parseOperationInput('remove_rooms', { roomIds: ['a', 'b'] }, REQUEST_BOUNDS)).toEqual({ ok: true, value: { roomsIds: ['a', 'b'] } });
    });

    test('drops repeated ids and keeps a rollout\'s resourceVersions and details', () => {
      const input = { roomsIds: ['a', 'b', 'a'], reason: 'rolling_update_replace', resourceVersions: { a: '7', b: 8 }, details: ['a: why', 3] };
      expect(parseOperationInput('remove_rooms', input, REQUEST_BOUNDS)).toEqual({
        ok: true, value: { roomsIds: ['a', 'b'], reason: 'rolling_update_replace', resourceVersions: { a: '7' }, details: ['a: why'] },
      });
    });

    test('keeps a rollout\'s floor of serving rooms when it is a whole number, and drops it otherwise', () => {
      expect(parseOperationInput('remove_rooms', { roomsIds: ['a'], keepServing: 30 }, REQUEST_BOUNDS)).toEqual({ ok: true, value: { roomsIds: ['a'], keepServing: 30 } });
      for (const keepServing of [-1, 1.5, '30', 1e300]) {
        expect(parseOperationInput('remove_rooms', { roomsIds: ['a'], keepServing }, REQUEST_BOUNDS)).toEqual({ ok: true, value: { roomsIds: ['a'] } });
      }
    });

    test('an amount, with its reason', () => {
      expect(parseOperationInput('remove_rooms', { amount: 2, reason: 'scale_down' }, REQUEST_BOUNDS)).toEqual({ ok: true, value: { amount: 2, reason: 'scale_down' } });
    });

    test("an amount with a scale-down's account of the rooms it keeps; a kept that is no text is dropped", () => {
      expect(parseOperationInput('remove_rooms', { amount: 2, reason: 'scale_down', kept: 'kept 1 room' }, REQUEST_BOUNDS)).toEqual({ ok: true, value: { amount: 2, reason: 'scale_down', kept: 'kept 1 room' } });
      expect(parseOperationInput('remove_rooms', { amount: 2, kept: 3 }, REQUEST_BOUNDS)).toEqual({ ok: true, value: { amount: 2 } });
    });

    test.each([
      ['nothing', {}, 'amount', 'is a required field (or give roomsIds)'],
      ['an empty list', { roomsIds: [] }, 'roomsIds', 'must be a non-empty list of room ids'],
      ['an empty id', { roomsIds: [''] }, 'roomsIds[0]', ROOM_ID_MESSAGE],
      ['an id too long', { roomsIds: ['a', 'x'.repeat(254)] }, 'roomsIds[1]', ROOM_ID_MESSAGE],
      ['an id that is not a string', { roomsIds: [7] }, 'roomsIds[0]', 'must be a room name (a string); got number'],
      ['a string for a list', { roomsIds: 'a' }, 'roomsIds', 'must be a non-empty list of room ids'],
      ['both amount and ids', { amount: 1, roomsIds: ['a'] }, 'amount', 'give either amount or roomsIds, not both'],
      ['too many ids for a request', { roomsIds: Array.from({ length: 1001 }, (_, i) => `r${i}`) }, 'roomsIds', 'must list at most 1000 room ids'],
      ['a zero amount', { amount: 0 }, 'amount', 'must be between 1 and 10000'],
    ])('refuses %s, naming the field', (_name, input, field, message) => {
      expect(parseOperationInput('remove_rooms', input, REQUEST_BOUNDS)).toEqual({ ok: false, errors: [{ field, message }] });
    });

    test('refuses every id that cannot be a room (a Kubernetes object name), naming each: an Operation written with kubectl is told as the API is', () => {
      const ids = ['room-1', 'a\u0000b', '%2F', 'x/y', 'UPPER', '../x', 'a..b', 'space-arena-2j8ef.v2'];
      expect(parseOperationInput('remove_rooms', { roomsIds: ids }, REQUEST_BOUNDS)).toEqual({
        ok: false, errors: [1, 2, 3, 4, 5, 6].map((i) => ({ field: `roomsIds[${i}]`, message: ROOM_ID_MESSAGE })),
      });
    });

    test('a body that is not an object is refused as a whole', () => {
      expect(parseOperationInput('remove_rooms', [1], REQUEST_BOUNDS)).toEqual({ ok: false, errors: [{ field: '', message: 'must be a JSON object' }] });
    });
  });

  describe('switch_active_version', () => {
    test.each([
      ['newActiveVersion', { newActiveVersion: 'v2.0.0' }],
      ['version (read too)', { version: 'v2.0.0' }],
      ['a version object (read too)', { version: { spec: { version: 'v2.0.0' } } }],
    ])('reads %s', (_name, input) => {
      expect(parseOperationInput('switch_active_version', input, REQUEST_BOUNDS)).toEqual({ ok: true, value: { newActiveVersion: 'v2.0.0' } });
    });

    test.each([
      ['nothing', {}, 'is a required field'],
      ['blank', { newActiveVersion: '  ' }, 'is a required field'],
      ['too long', { newActiveVersion: 'v'.repeat(65) }, 'must be at most 64 characters'],
      ['a path', { newActiveVersion: '../v1' }, 'must be a version such as "v1.2.0", each number of at most 9 digits'],
      ['a major too large to count', { newActiveVersion: 'v99999999999999999999.0.0' }, 'must be a version such as "v1.2.0", each number of at most 9 digits'],
      ['a number, naming its type', { newActiveVersion: 2 }, 'must be a string such as "v1.2.0"; got number'],
      ['null, naming it', { newActiveVersion: null }, 'must be a string such as "v1.2.0"; got null'],
      ['a list, naming it', { newActiveVersion: ['v2.0.0'] }, 'must be a string such as "v1.2.0"; got an array'],
    ])('refuses %s', (_name, input, message) => {
      expect(parseOperationInput('switch_active_version', input, REQUEST_BOUNDS)).toEqual({ ok: false, errors: [{ field: 'newActiveVersion', message }] });
    });
  });

  describe('create_scheduler and create_new_scheduler_version', () => {
    const spec = (schedulerObject('tennis-eu') as { spec: SchedulerSpec }).spec;

    test('carry the definition with the scheduler\'s name; the executor reads the spec back without it', () => {
      const input = schedulerDefinitionInput('tennis-eu', spec);
      expect(input).toEqual({ scheduler: { ...spec, name: 'tennis-eu' } });
      const parsed = parseOperationInput('create_new_scheduler_version', { ...input, firstAttempt: 'op-1' }, REQUEST_BOUNDS);
      expect(parsed).toEqual({ ok: true, value: { ...input, firstAttempt: 'op-1' } });
      expect(parsed.ok && specOfDefinitionInput(parsed.value)).toEqual(spec);
    });

    test('without a definition the executor takes the Scheduler\'s spec; a definition that is not an object is refused', () => {
      const parsed = parseOperationInput('create_scheduler', {}, REQUEST_BOUNDS);
      expect(parsed).toEqual({ ok: true, value: {} });
      expect(parsed.ok && specOfDefinitionInput(parsed.value)).toBeUndefined();
      expect(parseOperationInput('create_scheduler', { scheduler: 'x' }, REQUEST_BOUNDS)).toEqual({ ok: false, errors: [{ field: 'scheduler', message: 'must be the scheduler\'s definition (an object)' }] });
    });

    test.each<[string, unknown, string[]]>([
      ['a room template that is not an object', { name: 'tennis-eu', ...spec, spec: 'oops' }, ['scheduler.spec']],
      ['no definition but a name', { name: 'tennis-eu' }, ['scheduler.game', 'scheduler.maxSurge', 'scheduler.spec']],
      ['no container', { name: 'tennis-eu', ...spec, spec: { terminationGracePeriod: '10s', containers: [] } }, ['scheduler.spec.containers']],
      ['ports that are no list', { name: 'tennis-eu', ...spec, spec: { terminationGracePeriod: '10s', containers: [{ name: 'x', image: 'y', ports: 7 }] } }, ['scheduler.spec.containers[0].ports']],
      ['a negative roomsReplicas', { name: 'tennis-eu', ...spec, roomsReplicas: -5 }, ['scheduler.roomsReplicas']],
    ])('a definition the Scheduler schema refuses (%s, in an Operation written with kubectl: no API server judged it) is refused naming each field, before an executor reads it', (_what, scheduler, fields) => {
      for (const definition of ['create_scheduler', 'create_new_scheduler_version'] as const) {
        const parsed = parseOperationInput(definition, { scheduler }, REQUEST_BOUNDS);
        expect(parsed.ok).toBe(false);
        expect(parsed.ok ? [] : parsed.errors.map((e) => e.field)).toEqual(expect.arrayContaining(fields));
      }
    });
  });

  test('delete_scheduler takes no input but the attempt fields', () => {
    expect(parseOperationInput('delete_scheduler', { attempt: 2, other: true }, REQUEST_BOUNDS)).toEqual({ ok: true, value: { attempt: 2 } });
  });

  test('an executor\'s error names each field under input', () => {
    expect(describeInputErrors([{ field: 'amount', message: 'must be an integer' }, { field: '', message: 'must be a JSON object' }]))
      .toBe('input.amount must be an integer; input must be a JSON object');
  });
});
