/**
 * Management API credentials read from a Kubernetes Secret (keys `username` and `password`),
 * re-read periodically so a rotated Secret takes effect without a restart. The last good pair is
 * kept when a read fails. Values are never logged.
 */
import type * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../../common/src/logger';
import type { Credentials, CredentialsProvider } from '../auth';
import { apiStatus, describeApiError } from '../../../common/src/kube/clients';

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

/** How a read of the Secret went: read, found without a username or password, or not read (with the API server's status, if it answered). */
export type SecretRead = 'read' | 'incomplete' | { unreadable: number | undefined };

/** While no credentials are known, the Secret is read again this often (else every refresh interval). */
const UNKNOWN_RETRY_MS = 2_000;

export class SecretCredentials implements CredentialsProvider {
  private credentials: Credentials | undefined;
  private timer: NodeJS.Timeout | undefined;
  private problem: string | undefined;

  constructor(private readonly options: SecretCredentialsOptions) {}

  current(): Credentials | undefined {
    return this.credentials ?? this.options.fallback;
  }

  /** Why no credentials are known, while none are: the last read of the Secret, said. */
  unavailableReason(): string | undefined {
    return this.current() === undefined ? this.problem : undefined;
  }

  /** Reads the Secret; says how it went. A read that fails keeps the last good pair. */
  async refresh(): Promise<SecretRead> {
    const { name, namespace, logger } = this.options;
    const secret = `Secret ${namespace}/${name}`;
    try {
      const read = await this.options.core.readNamespacedSecret({ name, namespace });
      const username = decode(read.data?.username) ?? read.stringData?.username;
      const password = decode(read.data?.password) ?? read.stringData?.password;
      if (!username || !password) {
        logger.warn('auth secret lacks username or password', { secret: `${namespace}/${name}` });
        this.problem = `${secret} has no username and password`;
        return 'incomplete';
      }
      this.credentials = { username, password };
      this.problem = undefined;
      return 'read';
    } catch (err) {
      const status = apiStatus(err);
      logger.warn('auth secret could not be read; keeping the last credentials', { secret: `${namespace}/${name}`, error: describeApiError(err) });
      this.problem = status === 404 ? `${secret} does not exist`
        : status === 403 ? `the API server refused the gateway reading ${secret} (403 Forbidden)`
          : `${secret} could not be read: ${describeApiError(err)}`;
      return { unreadable: status };
    }
  }

  /** Reads the Secret again every `intervalMs`, and every UNKNOWN_RETRY_MS while no credentials are known. */
  start(intervalMs: number): void {
    if (this.timer) return;
    const next = (): void => {
      this.timer = setTimeout(() => {
        void this.refresh().finally(() => {
          if (this.timer) next();
        });
      }, this.current() === undefined ? Math.min(intervalMs, UNKNOWN_RETRY_MS) : intervalMs);
      this.timer.unref();
    };
    next();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
