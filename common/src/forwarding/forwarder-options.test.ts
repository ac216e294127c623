import { forwarderMetadata, forwarderTimeoutMs, isForwarderEnabled, isGrpcForwarder, isHostPortAddress } from './forwarder-options';
import type { Forwarder, GameRoomPort } from '../generated/resources';
import type { ForwardedRoom, ForwarderConfig } from './forwarder-types';

const base: ForwarderConfig = { name: 'f', address: '127.0.0.1:1' };

describe('forwarderTimeoutMs', () => {
  it.each<[unknown, number]>([
    [undefined, 1000],
    [250, 250],
    ['250', 250],
    [' 750 ', 750],
    ['12.5', 13],
    [0, 1000],
    [-5, 1000],
    ['', 1000],
    ['abc', 1000],
    ['10ms', 1000],
    [Number.NaN, 1000],
    [Number.POSITIVE_INFINITY, 1000],
    [null, 1000],
    [{}, 1000],
    [3_600_000, 3_600_000],
    ['9999999', 3_600_000],
    [2 ** 31 + 5, 3_600_000],
    [1e300, 3_600_000],
  ])('timeout %p gives %p ms', (timeout, expected) => {
    expect(forwarderTimeoutMs({ ...base, options: { timeout: timeout as number } })).toBe(expected);
  });

  it('uses the given default when the forwarder has none', () => {
    expect(forwarderTimeoutMs(base, 3000)).toBe(3000);
    expect(forwarderTimeoutMs({ ...base, options: {} }, 3000)).toBe(3000);
  });
});

describe('isHostPortAddress', () => {
  it.each(['mm:9000', '127.0.0.1:50051', '[::1]:50051', 'matchmaker.games.svc.cluster.local:65535', 'localhost:1'])('accepts %s', (address) => {
    expect(isHostPortAddress(address)).toBe(true);
  });
  it.each(['unix:/run/docker.sock', 'unix:///var/run/x.sock', 'unix:9000', 'unix-abstract:x', 'dns:///mm:9000', 'dns:9000', 'ipv4:10.0.0.1:80', 'xds:80',
    'mm', 'mm:', 'mm:0', 'mm:65536', 'mm:80/x', 'http://mm:80', ':80', 'mm:80 ', ' mm:80', 'a b:80', `${'a'.repeat(300)}:80`, ''])('refuses %p', (address) => {
    expect(isHostPortAddress(address)).toBe(false);
  });
});

describe('isForwarderEnabled', () => {
  it.each<[boolean | undefined, boolean]>([[true, true], [undefined, false], [false, false]])('enable %p -> %p', (enable, expected) => {
    expect(isForwarderEnabled({ ...base, enable })).toBe(expected);
  });
});

describe('isGrpcForwarder', () => {
  it.each<[string | undefined, boolean]>([[undefined, true], ['gRPC', true], ['grpc', true], ['http', false]])('type %p -> %p', (type, expected) => {
    expect(isGrpcForwarder({ ...base, type })).toBe(expected);
  });
});

describe('forwarderMetadata', () => {
  it('returns the metadata object, or an empty object for anything else', () => {
    expect(forwarderMetadata({ ...base, options: { metadata: { a: 1 } } })).toEqual({ a: 1 });
    expect(forwarderMetadata(base)).toEqual({});
    expect(forwarderMetadata({ ...base, options: { metadata: ['x'] as unknown as Record<string, unknown> } })).toEqual({});
    expect(forwarderMetadata({ ...base, options: { metadata: null as unknown as Record<string, unknown> } })).toEqual({});
  });
});

describe('structural compatibility with the generated resource types', () => {
  it('accepts a Scheduler forwarder and a GameRoom\'s ports as they are', () => {
    const fromCrd: Forwarder = { name: 'mm', enable: true, type: 'gRPC', address: 'mm:9000', options: { timeout: '500', metadata: { a: 1 } } };
    const config: ForwarderConfig = fromCrd;
    const ports: GameRoomPort[] = [{ name: 'clientPort', protocol: 'UDP', port: 7000, containerPort: 7777 }];
    const room: ForwardedRoom = { game: 'g', schedulerName: 's', roomId: 'r', host: 'h', ports };
    expect(forwarderTimeoutMs(config)).toBe(500);
    expect(room.ports).toBe(ports);
  });
});
