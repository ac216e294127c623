/**
 * The simulated kubelet: registers simulated Nodes, schedules pending Pods onto them (the
 * scheduler's role), and reports container states for the Pods bound to them (the kubelet's
 * role), through the public Kubernetes API only. It runs against the sandbox API server and
 * against any API server that has no kubelet of its own.
 *
 * One pod informer feeds one keyed work queue; each run re-reads the pod from the cache, decides
 * with the pure functions in `node-fit.ts` and `pod-status.ts`, and writes only what changed. A node
 * informer keeps what the scheduler reads of each simulated Node (labels, taints, cordon) current.
 */
import type { CoreV1Api, KubeConfig, V1Node, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { silentLogger, type Logger } from '../../../common/src/logger';
import { fitPod, nodeCandidate, sameCandidate, type NodeCandidate, type NodeLoad } from './node-fit';
import { containerBehaviour, type ContainerBehaviour } from './pod-behaviour';
import { hostPortsOf, isTerminalPhase, isTerminating, podKey, splitPodKey } from './pod-fields';
import { rfc3339, toMillis } from '../../../common/src/kube/timestamps';
import { computePodStatus, type PodStatusBody } from './pod-status';
import { containerConfigErrors, hasConfigReferences, type ConfigLookup, type ConfigSource } from './container-config';
import { PodInformer } from './pod-informer';
import { ResilientInformer } from '../../../common/src/kube/informer';
import { apiErrorFields, apiStatus, describeApiError, isConflict, isNotFound, isRetryable, makeKubeClients, MERGE_PATCH, roomkeeperUserAgent, type KubeClients } from '../../../common/src/kube/clients';
import { nodeBody, nodeStatusBody, podIpOf, simNodeSpec, type NodeReadiness, type SimNodeSpec } from './sim-node';
import { WorkQueue, type WorkResult } from '../../../common/src/runtime/work-queue';
import { systemClock, type Clock } from '../../../common/src/runtime/clock';

export interface SimKubeletOptions {
  kubeConfig: KubeConfig;
  /** Simulated nodes to register (default 3). */
  nodes?: number;
  /** `pods` capacity of each node (default 5000, so the default 3 nodes hold 15,000 pods). */
  podsPerNode?: number;
  /** Delay between binding and Running (default 200 ms; 0 means one write straight to Running). */
  startDelayMs?: number;
  /** Cap on the grace period before a deleted pod is removed (default 1000 ms; 0 allowed). */
  deletionCapMs?: number;
  /** Back-off before a restart and before ImagePullBackOff (default 1000 ms). */
  restartBackoffMs?: number;
  /** Pods processed at once (default 32). */
  concurrency?: number;
  /** Play the scheduler's role too (default true). */
  schedule?: boolean;
  /** `spec.schedulerName` values this scheduler serves (default `default-scheduler`). */
  schedulerNames?: readonly string[];
  /** Only the pods this label selector matches are scheduled and run (default: every pod). */
  podLabelSelector?: string;
  /** Interval of node heartbeats (Ready condition refresh), default 20 s; 0 disables. */
  heartbeatMs?: number;
  logger?: Logger;
  clock?: Clock;
}

export interface SimKubeletStats {
  nodes: number;
  bindings: number;
  statusWrites: number;
  deletions: number;
  unschedulablePods: number;
  errors: number;
  /** LISTs of the pod informer that failed (each retried after a backoff). */
  informerListFailures: number;
}

interface PodRecord {
  boundAtMs: number;
  /**
   * When this kubelet got round to starting the containers: boundAt + startDelay, or later when its
   * work queue is behind. A real kubelet's `startedAt` is when the container really started, and the
   * simulated game server starts only when it sees the pod running, so the simulation may not date a
   * start in the past (benchmark 10: a queue 2 minutes behind wrote `startedAt` 2 minutes old, and the
   * operator's initialization timeout, which counts from it, expired rooms whose servers had just begun).
   */
  startedAtMs?: number;
  podIP: string;
  behaviours: ContainerBehaviour[];
  lastWritten?: string;
  /** The resourceVersion our last status write produced, and whether the cache has shown it. */
  writtenRv?: string;
  writeSeen?: boolean;
  writtenAtMs?: number;
  /** Containers not created yet because a Secret or ConfigMap they read is missing (`container-config.ts`). */
  configErrors?: Map<string, string>;
  deletionSeenAtMs?: number;
  deleteIssued?: boolean;
}

interface SimNodeState {
  spec: SimNodeSpec;
  /** What the scheduler reads of the Node as the node informer shows it; undefined while there is no Node. */
  candidate?: NodeCandidate;
  ipCounter: number;
  pods: Map<string, string[]>;
  usedPorts: Map<string, number>;
  /** Set once `setNodeReady` was called; before that the node is Ready since registration. */
  readiness?: NodeReadiness;
  /** The node's status writes, one after the other: a heartbeat never lands after a later change. */
  writes: Promise<void>;
}

export class SimKubelet {
  private readonly core: CoreV1Api;
  private readonly connections: KubeClients;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly nodes = new Map<string, SimNodeState>();
  /** The nodes the scheduler may consider (those with a Node object), refreshed from the node informer. */
  private candidates: NodeCandidate[] = [];
  private readonly podNode = new Map<string, string>();
  private readonly assumed = new Map<string, string>();
  private readonly unschedulable = new Set<string>();
  private readonly unschedulableWritten = new Map<string, string>();
  private readonly records = new Map<string, PodRecord>();
  private readonly informer: PodInformer;
  private readonly nodeInformer: ResilientInformer<V1Node>;
  private readonly queue: WorkQueue;
  private readonly counters = { bindings: 0, statusWrites: 0, deletions: 0, errors: 0 };
  private heartbeat: NodeJS.Timeout | undefined;
  private readySinceIso = '';
  private retryScheduled = false;
  private stopped = false;

  private readonly startDelayMs: number;
  private readonly deletionCapMs: number;
  private readonly backoffMs: number;
  /** How soon a container that could not be created is tried again: 10 × the back-off (10 s by default, as a kubelet's pod worker retries). */
  private readonly configRetryMs: number;
  private readonly configLookup: ConfigLookup;
  private readonly scheduleEnabled: boolean;
  private readonly schedulerNames: ReadonlySet<string>;

  private constructor(private readonly options: SimKubeletOptions) {
    // The same clients as the product's: pooled connections that heal after an API server outage
    // and a timeout on every request. A kubelet is not rate limited here.
    this.connections = makeKubeClients(options.kubeConfig, { qps: 1_000_000, burst: 1_000_000 }, { userAgent: roomkeeperUserAgent('simulated-kubelet') });
    const kubeConfig = this.connections.kc;
    this.core = this.connections.core;
    this.logger = (options.logger ?? silentLogger()).child({ component: 'sim-kubelet' });
    this.clock = options.clock ?? systemClock;
    this.startDelayMs = Math.max(0, options.startDelayMs ?? 200);
    this.deletionCapMs = Math.max(0, options.deletionCapMs ?? 1000);
    this.backoffMs = Math.max(1, options.restartBackoffMs ?? 1000);
    this.configRetryMs = 10 * this.backoffMs;
    const keysOf = async (read: () => Promise<{ data?: Record<string, string>; binaryData?: Record<string, string> }>): Promise<ConfigSource> => {
      try {
        const object = await read();
        return { keys: new Set([...Object.keys(object.data ?? {}), ...Object.keys(object.binaryData ?? {})]) };
      } catch (err) {
        return isNotFound(err) ? { notFound: true } : { error: describeApiError(err) };
      }
    };
    this.configLookup = {
      secret: (namespace, name) => keysOf(() => this.core.readNamespacedSecret({ namespace, name })),
      configMap: (namespace, name) => keysOf(() => this.core.readNamespacedConfigMap({ namespace, name })),
    };
    this.scheduleEnabled = options.schedule ?? true;
    this.schedulerNames = new Set(options.schedulerNames ?? ['default-scheduler']);
    const podsPerNode = options.podsPerNode ?? 5000;
    for (let i = 0; i < (options.nodes ?? 3); i++) {
      const spec = simNodeSpec(i, podsPerNode);
      this.nodes.set(spec.name, { spec, ipCounter: 0, pods: new Map(), usedPorts: new Map(), writes: Promise.resolve() });
    }
    // Every Node, not only the labelled ones: an adopted node, or one created again under the same
    // name, need not carry the simulated label. Clusters that need a simulated kubelet have few nodes.
    this.nodeInformer = new ResilientInformer<V1Node>({
      kc: kubeConfig,
      path: '/api/v1/nodes',
      name: 'nodes',
      logger: this.logger,
      minBackoffMs: 200,
      maxBackoffMs: 10_000,
      list: (page) => this.core.listNode({ ...page }),
      transform: schedulingView,
      onEvent: (_type, node) => {
        if (this.nodes.has(node.metadata?.name ?? '')) this.refreshCandidates();
      },
    });
    this.informer = new PodInformer({ name: 'pods', kubeConfig, core: this.core, logger: this.logger, labelSelector: options.podLabelSelector });
    this.queue = new WorkQueue({
      concurrency: options.concurrency ?? 32,
      handler: (key) => this.reconcile(key),
      onError: (key, err, retryInMs) => {
        this.counters.errors++;
        const status = apiStatus(err);
        const level = status === 409 || status === 429 ? 'debug' : 'warn';
        this.logger.log(level, 'pod sync failed; retrying', { pod: key, ...apiErrorFields(err), retryInMs });
      },
    });
  }

  /** Registers the nodes, starts the pod informer and waits for its first list. */
  static async start(options: SimKubeletOptions): Promise<SimKubelet> {
    const kubelet = new SimKubelet(options);
    await kubelet.registerNodes();
    // Before any pod is scheduled: the scheduler reads taints and cordons from the node informer.
    await kubelet.nodeInformer.start();
    kubelet.refreshCandidates();
    kubelet.informer.subscribe((type, pod) => (type === 'delete' ? kubelet.onPodDeleted(pod) : kubelet.onPodEvent(pod)));
    await kubelet.informer.start();
    const heartbeatMs = options.heartbeatMs ?? 20_000;
    if (heartbeatMs > 0) {
      kubelet.heartbeat = setInterval(() => void kubelet.heartbeatNodes(), heartbeatMs);
      kubelet.heartbeat.unref();
    }
    kubelet.logger.info('simulated kubelet started', { nodes: kubelet.nodeNames });
    return kubelet;
  }

  /** The kubelet's pod informer, for other simulators to share (see SimRooms' `podInformer`). */
  get podInformer(): PodInformer {
    return this.informer;
  }

  get nodeNames(): string[] {
    return [...this.nodes.keys()];
  }

  /**
   * Reports a node NotReady from now on (`ready` false, with the kubelet's `message`), as a kubelet
   * whose container runtime or network failed does, or Ready again: written at once, and kept so by
   * the heartbeats (which would otherwise write Ready=True again). Resolves once written.
   */
  async setNodeReady(name: string, ready: boolean, message?: string): Promise<void> {
    const node = this.nodes.get(name);
    if (!node) throw new Error(`setNodeReady: ${name} is not a node of this simulated kubelet (its nodes: ${this.nodeNames.join(', ')})`);
    const current = node.readiness ?? { ready: true, sinceIso: this.readySinceIso };
    const sinceIso = current.ready === ready ? current.sinceIso : rfc3339(this.clock());
    node.readiness = ready ? { ready, sinceIso } : { ready, sinceIso, message: message ?? 'container runtime network not ready: NetworkReady=false (simulated)' };
    await this.writeNodeConditions(node);
  }

  stats(): SimKubeletStats {
    return { nodes: this.nodes.size, ...this.counters, unschedulablePods: this.unschedulable.size, informerListFailures: this.informer.listFailures };
  }

  /**
   * Stops the kubelet and deletes its nodes, or with `keepNodesWithPods` only those that hold no
   * pod: on a real cluster, kube-controller-manager's pod garbage collector deletes every pod bound
   * to a node that no longer exists, about 40 s after it went, so an `npm start` stopped for longer
   * than that (an upgrade, a restart) lost all its rooms, allocated and occupied ones included
   * (trial S). A node kept stops reporting: kube-controller-manager marks it NotReady and evicts its
   * pods 5 minutes later (their default toleration), unless a simulation takes it up again before
   * (the next `npm start` does: isSimulatedNode). Returns the nodes kept.
   */
  async stop(opts: { keepNodesWithPods?: boolean } = {}): Promise<string[]> {
    if (this.stopped) return [];
    this.stopped = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    const holding = new Set(opts.keepNodesWithPods ? this.informer.list().map((p) => p.spec?.nodeName ?? '') : []);
    const kept = this.nodeNames.filter((name) => holding.has(name));
    await this.nodeInformer.stop();
    await this.informer.stop();
    await this.queue.shutDown();
    // Leave the cluster as it was found otherwise: nodes without pods go.
    await Promise.all(this.nodeNames.filter((name) => !holding.has(name)).map((name) => this.core.deleteNode({ name }).catch(() => undefined)));
    await this.connections.close();
    return kept;
  }

  // ---- nodes ----

  /** Creates (or adopts) the nodes and marks them Ready; retries 429, 5xx and network errors a few times. */
  private async registerNodes(): Promise<void> {
    const nowIso = rfc3339(this.clock());
    this.readySinceIso = nowIso;
    await Promise.all([...this.nodes.values()].map((node) => this.withRetries(`register node ${node.spec.name}`, async () => {
      try {
        await this.core.createNode({ body: nodeBody(node.spec, nowIso) as unknown as V1Node });
      } catch (err) {
        if (!isConflict(err)) throw err;
      }
      await this.core.patchNodeStatus({ name: node.spec.name, body: { status: nodeStatusBody(node.spec, nowIso, nowIso) } }, MERGE_PATCH);
    })));
  }

  /**
   * Re-reads what the scheduler needs of each simulated node from the node informer's cache (level
   * based: any event about one of them recomputes them all). A node without a Node object takes no
   * pods. When a node changed (tainted, cordoned, or freed of either), the pods no node could take
   * are tried again.
   */
  private refreshCandidates(): void {
    let changed = false;
    const candidates: NodeCandidate[] = [];
    for (const node of this.nodes.values()) {
      const obj = this.nodeInformer.get(node.spec.name);
      const next = obj ? nodeCandidate(obj, node.spec.podCapacity) : undefined;
      if (!sameCandidate(node.candidate, next)) {
        changed = true;
        this.logger.debug('node changed for scheduling', { node: node.spec.name, taints: next?.taints, unschedulable: next?.unschedulable, present: next !== undefined });
        if (next) node.candidate = next;
        else delete node.candidate;
      }
      if (node.candidate) candidates.push(node.candidate);
    }
    this.candidates = candidates;
    if (changed) this.retryUnschedulable();
  }

  private async withRetries(what: string, fn: () => Promise<void>, attempts = 6): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await fn();
        return;
      } catch (err) {
        if (!isRetryable(err) || attempt >= attempts || this.stopped) throw err;
        const delay = 100 * 2 ** (attempt - 1);
        this.logger.warn(`${what} failed; retrying`, { ...apiErrorFields(err), retryInMs: delay });
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  private async heartbeatNodes(): Promise<void> {
    await Promise.all([...this.nodes.values()].map(async (node) => {
      try {
        await this.writeNodeConditions(node);
      } catch (err) {
        this.logger.debug('node heartbeat failed', { node: node.spec.name, ...apiErrorFields(err) });
      }
    }));
  }

  /** Writes the node's conditions as they are when its turn comes (after its earlier writes). */
  private writeNodeConditions(node: SimNodeState): Promise<void> {
    const write = node.writes.then(async () => {
      const conditions = nodeStatusBody(node.spec, rfc3339(this.clock()), this.readySinceIso, node.readiness).conditions;
      await this.core.patchNodeStatus({ name: node.spec.name, body: { status: { conditions } } }, MERGE_PATCH);
    });
    node.writes = write.catch(() => undefined);
    return write;
  }

  // ---- pod bookkeeping (synchronous, from informer events) ----

  private onPodEvent(pod: V1Pod): void {
    if (this.stopped) return;
    const rec = this.records.get(pod.metadata?.uid ?? '');
    if (rec?.writtenRv !== undefined && pod.metadata?.resourceVersion === rec.writtenRv) rec.writeSeen = true;
    this.updateUsage(pod);
    const nodeName = pod.spec?.nodeName;
    if (nodeName ? this.nodes.has(nodeName) : this.scheduleEnabled) this.queue.add(podKey(pod));
  }

  private onPodDeleted(pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? '';
    const key = podKey(pod);
    this.assumed.delete(uid);
    this.removeUsage(uid);
    this.records.delete(uid);
    this.unschedulable.delete(key);
    this.unschedulableWritten.delete(uid);
    this.queue.forget(key);
  }

  private updateUsage(pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? '';
    if (pod.spec?.nodeName) this.assumed.delete(uid);
    const nodeName = pod.spec?.nodeName || this.assumed.get(uid);
    if (nodeName && this.nodes.has(nodeName) && !isTerminalPhase(pod.status?.phase)) this.setUsage(uid, nodeName, hostPortsOf(pod));
    else this.removeUsage(uid);
  }

  private setUsage(uid: string, nodeName: string, ports: string[]): void {
    if (this.podNode.get(uid) === nodeName) return;
    this.removeUsage(uid);
    const node = this.nodes.get(nodeName);
    if (!node) return;
    node.pods.set(uid, ports);
    for (const p of ports) node.usedPorts.set(p, (node.usedPorts.get(p) ?? 0) + 1);
    this.podNode.set(uid, nodeName);
  }

  private removeUsage(uid: string): void {
    const nodeName = this.podNode.get(uid);
    if (nodeName === undefined) return;
    this.podNode.delete(uid);
    const node = this.nodes.get(nodeName);
    const ports = node?.pods.get(uid);
    if (!node || !ports) return;
    node.pods.delete(uid);
    for (const p of ports) {
      const n = (node.usedPorts.get(p) ?? 1) - 1;
      if (n <= 0) node.usedPorts.delete(p);
      else node.usedPorts.set(p, n);
    }
    this.retryUnschedulable();
  }

  private retryUnschedulable(): void {
    if (this.retryScheduled || this.unschedulable.size === 0) return;
    this.retryScheduled = true;
    setImmediate(() => {
      this.retryScheduled = false;
      for (const key of this.unschedulable) this.queue.add(key);
    });
  }

  private loadOf = (nodeName: string): NodeLoad => {
    const node = this.nodes.get(nodeName);
    return { podCount: node?.pods.size ?? 0, usedPorts: node?.usedPorts ?? new Set<string>() };
  };

  // ---- the work ----

  private async reconcile(key: string): Promise<WorkResult | undefined> {
    if (!this.informer.synced) return { requeueAfterMs: 100 };
    const { namespace, name } = splitPodKey(key);
    const pod = this.informer.get(name, namespace);
    if (!pod) return;
    const nodeName = pod.spec?.nodeName;
    if (!nodeName) return this.schedule(key, pod);
    const node = this.nodes.get(nodeName);
    if (!node) return;
    return this.sync(key, pod, node);
  }

  private async schedule(key: string, pod: V1Pod): Promise<WorkResult | undefined> {
    const uid = pod.metadata?.uid ?? '';
    if (!this.scheduleEnabled || isTerminating(pod) || this.assumed.has(uid)) return;
    if (!this.schedulerNames.has(pod.spec?.schedulerName ?? 'default-scheduler')) return;
    if (isTerminalPhase(pod.status?.phase)) return;
    const ports = hostPortsOf(pod);
    const fit = fitPod(pod, ports, this.candidates, this.loadOf);
    if (fit.node === undefined) {
      this.unschedulable.add(key);
      await this.markUnschedulable(pod, fit.message);
      return;
    }
    this.unschedulable.delete(key);
    this.assumed.set(uid, fit.node);
    this.setUsage(uid, fit.node, ports);
    const { namespace, name } = splitPodKey(key);
    try {
      await this.core.createNamespacedPodBinding({
        name, namespace,
        body: { apiVersion: 'v1', kind: 'Binding', metadata: { name, namespace, uid }, target: { apiVersion: 'v1', kind: 'Node', name: fit.node } },
      });
      this.counters.bindings++;
      this.logger.debug('pod bound', { pod: key, node: fit.node });
    } catch (err) {
      // A 409 says the pod is bound already (a binding that landed though its answer was lost) or
      // that another write raced this one: read it to know which. Kept assumed while unbound, the
      // pod was never scheduled again: after a 40 s etcd pause, rooms stayed Pending for good.
      const bound = isConflict(err) ? await this.core.readNamespacedPod({ name, namespace }).then((p) => Boolean(p.spec?.nodeName), () => false) : false;
      if (bound) return;
      this.assumed.delete(uid);
      if (!this.informer.get(name, namespace)?.spec?.nodeName) this.removeUsage(uid);
      if (isNotFound(err)) return;
      if (isConflict(err)) return { requeueAfterMs: this.backoffMs };
      throw err;
    }
  }

  private async markUnschedulable(pod: V1Pod, message: string): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    const current = (pod.status?.conditions ?? []).find((c) => c.type === 'PodScheduled');
    if (current?.status === 'False' && current.reason === 'Unschedulable' && current.message === message) return;
    if (this.unschedulableWritten.get(uid) === message) return;
    const others = (pod.status?.conditions ?? []).filter((c) => c.type !== 'PodScheduled').map(conditionBody);
    const scheduled = { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastProbeTime: null, lastTransitionTime: rfc3339(this.clock()) };
    try {
      await this.core.patchNamespacedPodStatus({
        name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '',
        body: { status: { conditions: [...others, scheduled] } },
      }, MERGE_PATCH);
      this.counters.statusWrites++;
      this.unschedulableWritten.set(uid, message);
      this.logger.debug('pod unschedulable', { pod: podKey(pod), message });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  private recordOf(pod: V1Pod, node: SimNodeState): PodRecord {
    const uid = pod.metadata?.uid ?? '';
    let rec = this.records.get(uid);
    if (!rec) {
      const existingIP = pod.status?.podIP;
      rec = {
        boundAtMs: toMillis(pod.status?.startTime) ?? this.clock(),
        startedAtMs: toMillis(pod.status?.containerStatuses?.[0]?.state?.running?.startedAt),
        podIP: existingIP || podIpOf(node.spec.index, node.ipCounter++),
        behaviours: (pod.spec?.containers ?? []).map((c) => containerBehaviour(c, (err) => {
          this.logger.warn('bad simulated behaviour; running the container normally', { pod: podKey(pod), container: c.name, error: err.message });
        })),
      };
      this.records.set(uid, rec);
    }
    return rec;
  }

  private async sync(key: string, pod: V1Pod, node: SimNodeState): Promise<WorkResult | undefined> {
    const rec = this.recordOf(pod, node);
    const now = this.clock();
    const { namespace, name } = splitPodKey(key);
    if (rec.startedAtMs === undefined && now >= rec.boundAtMs + this.startDelayMs && !isTerminating(pod)) {
      const errors = hasConfigReferences(pod) ? await containerConfigErrors(pod, this.configLookup) : undefined;
      if (errors === undefined || errors.size === 0) {
        rec.startedAtMs = now;
        rec.configErrors = undefined;
      } else {
        if (rec.configErrors === undefined) this.logger.info('containers not created: a Secret or ConfigMap they read is missing; trying again', { pod: key, errors: Object.fromEntries(errors) });
        rec.configErrors = errors;
      }
    }
    const statusInput = {
      pod, behaviours: rec.behaviours, boundAtMs: rec.boundAtMs, nowMs: now, startDelayMs: rec.startedAtMs !== undefined ? rec.startedAtMs - rec.boundAtMs : this.startDelayMs,
      backoffMs: this.backoffMs, hostIP: node.spec.internalIP, podIP: rec.podIP,
      ...(rec.startedAtMs === undefined && rec.configErrors ? { configErrors: rec.configErrors } : {}),
    };
    if (isTerminating(pod)) {
      if (rec.deleteIssued) return;
      rec.deletionSeenAtMs ??= now;
      const graceSeconds = pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
      const dueAt = rec.deletionSeenAtMs + Math.min(graceSeconds * 1000, this.deletionCapMs);
      if (now < dueAt) return { requeueAfterMs: dueAt - now };
      if (!isTerminalPhase(pod.status?.phase)) {
        await this.writeStatus(namespace, name, rec, computePodStatus({ ...statusInput, stoppedAtMs: now }).status);
      }
      try {
        await this.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0, body: { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata?.uid ?? '' } } });
        this.counters.deletions++;
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) throw err;
      }
      rec.deleteIssued = true;
      return;
    }
    const computed = computePodStatus(statusInput);
    // Like a real kubelet, assert the status it owns whenever the stored one differs: the node
    // lifecycle controller sets Ready=False on the pods of a node that missed heartbeats (an API
    // server outage), and only the kubelet sets it back.
    // Only once the cache has shown our own last write (onPodEvent), or had ample time to: before
    // that it may simply be behind.
    // A drift seen before then is looked at again once the cache has had that time: no later event
    // need come (a re-list after an outage shows only the controller's write, never ours).
    const settled = rec.writeSeen === true || now - (rec.writtenAtMs ?? 0) > CACHE_SETTLE_MS;
    const drifted = pod.metadata?.resourceVersion !== rec.writtenRv && statusDrifted(pod, computed.status);
    if (drifted && settled) rec.lastWritten = undefined;
    await this.writeStatus(namespace, name, rec, computed.status);
    const recheckAtMs = drifted && !settled ? (rec.writtenAtMs ?? now) + CACHE_SETTLE_MS + 1 : undefined;
    const configRetryAtMs = rec.startedAtMs === undefined && rec.configErrors ? now + this.configRetryMs : undefined;
    const nextAtMs = Math.min(computed.nextChangeAtMs ?? Infinity, recheckAtMs ?? Infinity, configRetryAtMs ?? Infinity);
    if (nextAtMs !== Infinity) return { requeueAfterMs: Math.max(1, nextAtMs - now) };
  }

  private async writeStatus(namespace: string, name: string, rec: PodRecord, status: object): Promise<void> {
    const text = JSON.stringify(status);
    if (rec.lastWritten === text) return;
    try {
      const written = await this.core.patchNamespacedPodStatus({ name, namespace, body: { status } }, MERGE_PATCH);
      this.counters.statusWrites++;
      rec.lastWritten = text;
      rec.writtenRv = written.metadata?.resourceVersion;
      rec.writeSeen = false;
      rec.writtenAtMs = this.clock();
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

/** What the node informer keeps of a Node: what the scheduler reads, and what the cache needs. */
function schedulingView(node: V1Node): V1Node {
  const { name, resourceVersion, labels } = node.metadata ?? {};
  return {
    metadata: { ...(name !== undefined ? { name } : {}), ...(resourceVersion !== undefined ? { resourceVersion } : {}), ...(labels ? { labels } : {}) },
    spec: { ...(node.spec?.taints ? { taints: node.spec.taints } : {}), ...(node.spec?.unschedulable !== undefined ? { unschedulable: node.spec.unschedulable } : {}) },
  };
}

/** After this long, a cache that still shows another status than our last write is not just behind. */
const CACHE_SETTLE_MS = 5000;

/** Whether the stored phase or a condition the kubelet owns differs from what it computed. */
function statusDrifted(pod: V1Pod, computed: PodStatusBody): boolean {
  if (pod.status?.phase !== computed.phase) return true;
  const stored = new Map((pod.status.conditions ?? []).map((c) => [c.type, c.status]));
  return computed.conditions.some((c) => stored.get(c.type) !== c.status);
}

function conditionBody(c: V1PodCondition): Record<string, unknown> {
  const t = toMillis(c.lastTransitionTime);
  return {
    type: c.type, status: c.status,
    ...(c.reason ? { reason: c.reason } : {}), ...(c.message ? { message: c.message } : {}),
    lastProbeTime: null, lastTransitionTime: t === undefined ? null : rfc3339(t),
  };
}
