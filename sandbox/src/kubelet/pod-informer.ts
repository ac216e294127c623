/**
 * The simulators' pod informer: the product's list+watch cache (`common/src/kube/informer.ts`,
 * which relists on 410, resumes after a clean end and retries errors with capped backoff) over
 * every pod, with its events fanned out to each subscriber, so the simulated kubelet and the
 * simulated rooms list and watch pods once between them.
 */
import type { CoreV1Api, KubeConfig, V1Pod } from '@kubernetes/client-node';
import { ResilientInformer, type EventType } from '../../../common/src/kube/informer';
import type { Logger } from '../../../common/src/logger';

export type PodEventHandler = (type: EventType, pod: V1Pod) => void;

export interface PodInformerOptions {
  name: string;
  kubeConfig: KubeConfig;
  core: CoreV1Api;
  logger: Logger;
  /** Only the pods it matches are listed and watched (default: every pod). */
  labelSelector?: string | undefined;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export class PodInformer {
  private readonly informer: ResilientInformer<V1Pod>;
  private readonly handlers: PodEventHandler[] = [];
  private failedLists = 0;
  private started: Promise<void> | undefined;

  constructor(options: PodInformerOptions) {
    this.informer = new ResilientInformer<V1Pod>({
      kc: options.kubeConfig,
      path: '/api/v1/pods',
      name: options.name,
      ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
      logger: options.logger,
      minBackoffMs: options.minBackoffMs ?? 200,
      maxBackoffMs: options.maxBackoffMs ?? 10_000,
      list: async (page) => {
        try {
          return await options.core.listPodForAllNamespaces({ ...page, ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}) });
        } catch (err) {
          this.failedLists++;
          throw err;
        }
      },
      onEvent: (type, pod) => {
        for (const handler of this.handlers) handler(type, pod);
      },
    });
  }

  /** Calls `handler` for every pod added, changed or deleted from now on. */
  subscribe(handler: PodEventHandler): void {
    this.handlers.push(handler);
  }

  /** LISTs of pods that failed (each one is retried after a backoff). */
  get listFailures(): number {
    return this.failedLists;
  }

  get synced(): boolean {
    return this.informer.synced;
  }

  get(name: string, namespace: string): V1Pod | undefined {
    return this.informer.get(name, namespace);
  }

  list(): readonly V1Pod[] {
    return this.informer.list();
  }

  /**
   * Starts list+watch and resolves once the first list has loaded. A second caller (a second user
   * of a shared informer) only waits for that.
   */
  async start(): Promise<void> {
    this.started ??= this.informer.start();
    await this.started;
  }

  async stop(): Promise<void> {
    await this.informer.stop();
  }
}
