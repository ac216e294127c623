/**
 * The configuration `npm start` runs the operator and the gateway with: the environment, as for
 * any deployment (common/src/config.ts), with the local credentials kept in the state folder where
 * the environment names none, and on the embedded sandbox a health check every 2 s unless
 * ROOMKEEPER_HEALTH_INTERVAL is set.
 */
import { loadConfig, type Config } from '../common/src/config';

export interface LocalSecrets { username: string; password: string; roomTokenSecret: string }

/** How often `npm start` checks rooms on the embedded sandbox when the environment does not say. */
const SANDBOX_HEALTH_INTERVAL_MS = 2000;

export function launcherConfig(env: NodeJS.ProcessEnv, secrets: LocalSecrets, onSandbox: boolean): Config {
  return loadConfig(env, {
    authUsername: env.ROOMKEEPER_AUTH_USERNAME || secrets.username,
    authPassword: env.ROOMKEEPER_AUTH_PASSWORD || secrets.password,
    roomTokenSecret: env.ROOMKEEPER_ROOM_TOKEN_SECRET || secrets.roomTokenSecret,
    // An override wins over the environment (loadConfig), so it is made only where the user set none.
    ...(onSandbox && !env.ROOMKEEPER_HEALTH_INTERVAL ? { healthInterval: SANDBOX_HEALTH_INTERVAL_MS } : {}),
  });
}
