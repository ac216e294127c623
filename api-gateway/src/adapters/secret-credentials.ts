/**
 * Management API credentials read from a Kubernetes Secret (keys `username` and `password`),
 * re-read periodically so a rotated Secret takes effect without a restart. The last good pair is
 * kept when a read fails. Values are never logged.
 */
import type * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../../common/src/logger';
import type { Credentials, CredentialsProvider } from '../auth';

export interface SecretCredentialsOptions {
  core: k8s.CoreV1Api;
  name: string;
  namespace: string;
  logger: Logger;
  /** Credentials accepted when the Secret has none (from config); may be undefined. */
  fallback?: Credentials;
}

function decode(value: string | undefined): string | undefined {
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
}

export class SecretCredentials implements CredentialsProvider {
  private credentials: Credentials | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: SecretCredentialsOptions) {}

  current(): Credentials | undefined {
    return this.credentials ?? this.options.fallback;
  }

  /** Reads the Secret; returns whether it held usable credentials. */
  async refresh(): Promise<boolean> {
    const { name, namespace, logger } = this.options;
    try {
      const secret = await this.options.core.readNamespacedSecret({ name, namespace });
      const username = decode(secret.data?.username) ?? secret.stringData?.username;
      const password = decode(secret.data?.password) ?? secret.stringData?.password;
      if (!username || !password) {
        logger.warn('auth secret lacks username or password', { secret: `${namespace}/${name}` });
        return false;
      }
      this.credentials = { username, password };
      return true;
    } catch (err) {
      logger.warn('auth secret could not be read; keeping the last credentials', { secret: `${namespace}/${name}`, error: err instanceof Error ? err.message : String(err) });
      return false;
    }
  }

  start(intervalMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      void this.refresh();
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
