import * as fs from 'node:fs';
import * as path from 'node:path';
import { CONFIG_SCHEMA, ConfigError, describeConfig, loadConfig, operatorConfigProblems } from './config';

describe('configuration', () => {
  test('defaults load, and are frozen', () => {
    const config = loadConfig({});
    expect(config.kubeQps).toBe(400);
    expect(config.kubeBurst).toBe(800);
    expect(config.operationLeaseTtl).toBe(5000);
    expect(Object.isFrozen(config)).toBe(true);
  });

  test.each([
    ['ROOMKEEPER_KUBE_QPS', 'lots', /ROOMKEEPER_KUBE_QPS: expected a number/],
    ['ROOMKEEPER_KUBE_BURST', '1.5', /expected an integer/],
    ['ROOMKEEPER_LEADER_ELECTION', 'maybe', /expected true or false/],
    ['ROOMKEEPER_ROOM_PING_TIMEOUT', '5 minutes', /expected a duration/],
    ['ROOMKEEPER_ADD_ROOMS_LIMIT', '0', /must be at least 1/],
  ])('%s=%s fails fast, naming the variable', (env, value, message) => {
    expect(() => loadConfig({ [env]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [env]: value })).toThrow(message);
  });

  test('durations accept units', () => {
    expect(loadConfig({ ROOMKEEPER_ROOM_PING_TIMEOUT: '4m', ROOMKEEPER_HEALTH_INTERVAL: '500ms', ROOMKEEPER_OPERATION_LEASE_TTL: '5s' }))
      .toMatchObject({ roomPingTimeout: 240_000, healthInterval: 500, operationLeaseTtl: 5000 });
  });

  test('every problem is listed at once', () => {
    try {
      loadConfig({ ROOMKEEPER_KUBE_QPS: 'x', ROOMKEEPER_KUBE_BURST: 'y' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect((err as ConfigError).problems).toHaveLength(2);
    }
  });

  test('the leader election\'s three durations must nest: retry period < renew deadline < lease duration', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems({ ROOMKEEPER_LEADER_RETRY_PERIOD: '10s' })).toEqual(['ROOMKEEPER_LEADER_RETRY_PERIOD must be shorter than ROOMKEEPER_LEADER_RENEW_DEADLINE']);
    expect(problems({ ROOMKEEPER_LEADER_RENEW_DEADLINE: '15s' })).toEqual(['ROOMKEEPER_LEADER_RENEW_DEADLINE must be shorter than ROOMKEEPER_LEADER_LEASE_DURATION']);
    expect(problems({ ROOMKEEPER_LEADER_RETRY_PERIOD: '9s' })).toEqual([]);
  });

  test('the operator refuses a silence timeout not longer than the gateways\' flush interval; the gateway, which does not read it, takes any', () => {
    expect(operatorConfigProblems(loadConfig({ ROOMKEEPER_ROOM_SILENCE_TIMEOUT: '30s' }))).toEqual([expect.stringMatching(/^ROOMKEEPER_ROOM_SILENCE_TIMEOUT \(30000 ms\) must be longer than ROOMKEEPER_PING_FLUSH_INTERVAL \(30000 ms\), or 0 to mark no room silent/)]);
    expect(operatorConfigProblems(loadConfig({ ROOMKEEPER_PING_FLUSH_INTERVAL: '10m' }))).toHaveLength(1);
    expect(operatorConfigProblems(loadConfig({ ROOMKEEPER_ROOM_SILENCE_TIMEOUT: '0', ROOMKEEPER_PING_FLUSH_INTERVAL: '10m' }))).toEqual([]);
    expect(operatorConfigProblems(loadConfig({ ROOMKEEPER_ROOM_SILENCE_TIMEOUT: '2s', ROOMKEEPER_PING_FLUSH_INTERVAL: '1s' }))).toEqual([]);
    expect(operatorConfigProblems(loadConfig({}))).toEqual([]);
  });

  test('the README documents every setting, exactly as the schema says', () => {
    const readme = fs.readFileSync(path.resolve(__dirname, '../../README.md'), 'utf8');
    expect(readme).toContain(describeConfig());
    expect(Object.keys(CONFIG_SCHEMA).length).toBeGreaterThan(30);
  });
});
