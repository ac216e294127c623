/**
 * The configuration `npm start` gives the operator and the gateway: the README's Configuration
 * settings apply as for any deployment, so a setting in the environment wins over what `npm start`
 * would choose (its local credentials, and on the sandbox a health check every 2 s).
 */
import { CONFIG_SCHEMA } from '../../common/src/config';
import { launcherConfig } from '../../launcher/start-config';

const secrets = { username: 'admin', password: 'local-password', roomTokenSecret: 'local-room-secret' };

describe('npm start configuration', () => {
  test.each([
    ['on the sandbox, nothing set: every 2 s', true, {}, 2000],
    ['on the sandbox, ROOMKEEPER_HEALTH_INTERVAL=30s: every 30 s', true, { ROOMKEEPER_HEALTH_INTERVAL: '30s' }, 30_000],
    ['on a cluster, nothing set: the default', false, {}, CONFIG_SCHEMA.healthInterval.default],
    ['on a cluster, ROOMKEEPER_HEALTH_INTERVAL=5s: every 5 s', false, { ROOMKEEPER_HEALTH_INTERVAL: '5s' }, 5000],
  ])('health check %s', (_case, onSandbox, env, intervalMs) => {
    expect(launcherConfig(env, secrets, onSandbox).healthInterval).toBe(intervalMs);
  });

  test('the credentials kept in the state folder apply where the environment names none', () => {
    expect(launcherConfig({}, secrets, true)).toMatchObject({ authUsername: 'admin', authPassword: 'local-password', roomTokenSecret: 'local-room-secret' });
    expect(launcherConfig({ ROOMKEEPER_AUTH_PASSWORD: 'mine' }, secrets, false)).toMatchObject({ authUsername: 'admin', authPassword: 'mine' });
  });
});
