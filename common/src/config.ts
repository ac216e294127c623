/**
 * Configuration: one typed, documented schema. Each key has a default and an environment
 * variable; values are parsed once at start-up, validated (fail fast with every problem listed),
 * then frozen. `describeConfig()` renders the table the README and the Helm values document.
 */

type Kind = 'string' | 'int' | 'number' | 'bool' | 'url' | 'duration';

interface KeySpec<K extends Kind = Kind, D extends KindType<K> | undefined = KindType<K> | undefined> {
  env: string;
  kind: K;
  /** Its type is the default given, so `Config` knows which keys have none (and may be undefined). */
  default: D;
  help: string;
  min?: number;
  secret?: boolean;
}

type KindType<K extends Kind> = K extends 'string' | 'url' ? string : K extends 'bool' ? boolean : number;

function key<K extends Kind, D extends KindType<K> | undefined>(env: string, kind: K, def: D, help: string, extra: { min?: number; secret?: boolean } = {}): KeySpec<K, D> {
  return { env, kind, default: def, help, ...extra };
}

/** Every setting of every Roomkeeper process. Durations are milliseconds (env accepts `500ms`, `5s`, `2m`, `1h` or a bare number of ms). */
export const CONFIG_SCHEMA = {
  logLevel: key('ROOMKEEPER_LOG_LEVEL', 'string', 'info', 'Log level: error, warn, info, debug.'),
  kubeQps: key('ROOMKEEPER_KUBE_QPS', 'number', 400, 'Client-side rate limit for Kubernetes API requests (requests per second, steady state). Events (events.k8s.io) have their own: 25 per second, burst 50.', { min: 1 }),
  kubeBurst: key('ROOMKEEPER_KUBE_BURST', 'int', 800, 'Client-side burst above the QPS limit.', { min: 1 }),

  operatorPort: key('ROOMKEEPER_OPERATOR_PORT', 'int', 8081, 'Operator health (/healthz, /readyz) and /metrics port.', { min: 0 }),
  leaderElection: key('ROOMKEEPER_LEADER_ELECTION', 'bool', true, 'Elect a leader through a coordination.k8s.io Lease; only the leader executes operations.'),
  leaseNamespace: key('ROOMKEEPER_LEASE_NAMESPACE', 'string', 'roomkeeper-system', 'Namespace of the leader-election Lease.'),
  leaseName: key('ROOMKEEPER_LEASE_NAME', 'string', 'roomkeeper-operator', 'Name of the leader-election Lease.'),
  identity: key('ROOMKEEPER_POD_NAME', 'string', undefined, 'Identity of this replica: in leader election (the operator\'s defaults to hostname-pid-random), and in the gateway\'s PingDigest names and AllocationClaim labels (the gateway\'s defaults to the hostname, the pod\'s name in a cluster: two gateways on one host outside Kubernetes need one each).'),
  leaseDuration: key('ROOMKEEPER_LEADER_LEASE_DURATION', 'duration', 15_000, 'Leader lease duration.', { min: 1000 }),
  renewDeadline: key('ROOMKEEPER_LEADER_RENEW_DEADLINE', 'duration', 10_000, 'Leader gives up if it cannot renew within this time.', { min: 500 }),
  retryPeriod: key('ROOMKEEPER_LEADER_RETRY_PERIOD', 'duration', 2_000, 'How often candidates try to acquire or renew.', { min: 100 }),
  livenessReconcileTimeout: key('ROOMKEEPER_LIVENESS_RECONCILE_TIMEOUT', 'duration', 600_000, 'Operator liveness: a reconcile running longer than this, not counting its waits on the Kubernetes API (requests time out, so an API server that answers slowly or not at all never trips it; /readyz tells of that), makes /healthz answer 503 (check `reconciles`), so the kubelet restarts a process whose reconcile waits on something that never ends. Reconciles at 10,000 rooms on 2 cores take tens of seconds; operations run outside reconciles.', { min: 1000 }),
  livenessLeaseSlack: key('ROOMKEEPER_LIVENESS_LEASE_SLACK', 'duration', 60_000, 'Operator liveness: a leader that has not renewed its Lease for the lease duration plus this makes /healthz answer 503 (check `leader-lease`): its election loop is stuck and another replica may lead (kube-controller-manager\'s leader-election health check, 20 s there).', { min: 0 }),
  livenessCacheTimeout: key('ROOMKEEPER_LIVENESS_CACHE_TIMEOUT', 'duration', 600_000, 'Operator and gateway liveness: a cache\'s list request (one page) or watch start without an answer for longer than this makes /healthz answer 503 (check `caches`). Requests time out after 30 s, so only a connection that will never answer trips it; an API server that is down does not (/readyz tells of that).', { min: 1000 }),
  operationLeaseTtl: key('ROOMKEEPER_OPERATION_LEASE_TTL', 'duration', 5_000, 'TTL of an executing operation\'s lease (renewed before it expires).', { min: 200 }),
  operationRetentionCount: key('ROOMKEEPER_OPERATION_RETENTION_COUNT', 'int', 200, 'Finished operations kept per scheduler, of each kind: the operator\'s own add_rooms and remove_rooms (the health check\'s, a rollout\'s steps), and every other.', { min: 1 }),
  operationRetentionAge: key('ROOMKEEPER_OPERATION_RETENTION_AGE', 'duration', 7 * 24 * 3_600_000, 'Finished operations older than this are pruned.', { min: 1000 }),
  versionHistoryLimit: key('ROOMKEEPER_VERSION_HISTORY_LIMIT', 'int', 100, 'SchedulerVersions kept per scheduler: each switch of the active version deletes the oldest beyond this many, except the active one, one an operation names, one a room still runs and the greatest of each major (so no later version reuses a number); its history names them.', { min: 1 }),
  roomInitTimeout: key('ROOMKEEPER_ROOM_INIT_TIMEOUT', 'duration', 120_000, 'A room that never pinged, pending or unready, whose pod started longer ago than this is expired and replaced (a room whose pod waits for the cluster to start it is not; a room that pinged is judged by the ping timeout), and so is a room that pings while its pod has not been ready for this long on a ready node (a failing readiness probe), unless its game server said it has players.', { min: 100 }),
  roomPingTimeout: key('ROOMKEEPER_ROOM_PING_TIMEOUT', 'duration', 240_000, 'A room whose last ping is older than this is expired and replaced.', { min: 100 }),
  roomSilenceTimeout: key('ROOMKEEPER_ROOM_SILENCE_TIMEOUT', 'duration', 90_000, 'A room not heard from for this long (no ping recorded by any gateway replica) is marked silent (its GameRoom\'s status.silentSince) and not allocated until a later ping is seen: its game server may hang. The health check makes a room in its place (up to the scheduler\'s maxSurge; not while a rolling update runs), and removes it only at ROOMKEEPER_ROOM_PING_TIMEOUT if it stays silent; one heard again leaves a room too many, which a scale-down removes. Set it above ROOMKEEPER_PING_FLUSH_INTERVAL plus your game servers\' ping interval (a ping reaches the operator at its gateway\'s next flush; the operator does not start with one not above the flush interval); 0 turns it off. No room is marked while the expiry brake would hold (a silence as wide as a mass expiry, the operator\'s sight in doubt).', { min: 0 }),
  expiryGrace: key('ROOMKEEPER_EXPIRY_GRACE', 'duration', 0, 'Expiry brake: after the operator gains leadership or its room caches regain sight of the API server, no room is expired for this long (0: one room ping timeout).', { min: 0 }),
  expiryBrakeShare: key('ROOMKEEPER_EXPIRY_BRAKE_SHARE', 'number', 0.5, 'Expiry brake: when rooms would expire while more than this share of a scheduler\'s rooms have been silent for more than half their timeout (and more than ROOMKEEPER_EXPIRY_BRAKE_MIN), none is expired unless pings are shown to reach the operator (a gateway digest of any scheduler flushed every half ping timeout, for a whole ping timeout) while the other schedulers\' rooms are mostly heard: it suspects the pings\' path, decides again at each check, and tells the scheduler (Warning RoomExpiryHeld). Then the silent rooms are expired: game servers that hang are replaced.', { min: 0 }),
  expiryBrakeMin: key('ROOMKEEPER_EXPIRY_BRAKE_MIN', 'int', 5, 'Expiry brake: a mass expiry is more than this many rooms silent for more than half their timeout.', { min: 0 }),
  roomDeletionTimeout: key('ROOMKEEPER_ROOM_DELETION_TIMEOUT', 'duration', 120_000, 'A terminating room older than this is force-removed.', { min: 100 }),
  orphanedPodGrace: key('ROOMKEEPER_ORPHANED_POD_GRACE', 'duration', 30_000, 'A room pod whose GameRoom is gone (deleted with `--cascade=orphan`, or not collected by the garbage collector) is deleted once the operator has seen it so, on current caches, for this long (a Warning Event `OrphanedRoomPodsDeleted` tells it).', { min: 100 }),
  healthInterval: key('ROOMKEEPER_HEALTH_INTERVAL', 'duration', 10_000, 'How often each scheduler\'s rooms are checked (expiry, desired count, autoscaling).', { min: 100 }),
  autoscaleDebounce: key('ROOMKEEPER_AUTOSCALE_DEBOUNCE', 'duration', 1_000, 'Room status changes trigger an autoscaling evaluation, and a recount of the Scheduler status\'s rooms, after this debounce.', { min: 0 }),
  addRoomsConcurrency: key('ROOMKEEPER_ADD_ROOMS_CONCURRENCY', 'int', 50, 'Rooms created in parallel by one add_rooms operation.', { min: 1 }),
  addRoomsLimit: key('ROOMKEEPER_ADD_ROOMS_LIMIT', 'int', 1000, 'Most rooms one add_rooms or create_scheduler operation creates; the health check adds the rest in further add_rooms operations.', { min: 1 }),
  maxRoomsPerScheduler: key('ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER', 'int', 10_000, 'Most rooms one scheduler may have: the gateway refuses a roomsReplicas, autoscaling.min or autoscaling.max above it (400 naming the field) and an add-rooms that would pass it (one queued behind others that would pass it when it runs ends in error, changing nothing); a roomsReplicas above it written with kubectl is refused by the operator, which keeps the fleet as it is and says so (status.autoscaling.lastDecision, a RoomCountNotDecided Warning; a new Scheduler\'s create_scheduler ends in error and makes nothing, until the spec is within it), and an autoscaling.min or autoscaling.max above it by its version operation, so the autoscaling of the active version stays in force; autoscaling decisions are capped at it (autoscaling.max -1 means this limit).', { min: 1 }),
  removeRoomsLimit: key('ROOMKEEPER_REMOVE_ROOMS_LIMIT', 'int', 1000, 'Most rooms one remove_rooms operation removes: one asked for by amount, and one the health check enqueues (expired rooms, a rollout\'s replacements; its next check takes the rest).', { min: 1 }),
  validationAttempts: key('ROOMKEEPER_VALIDATION_ATTEMPTS', 'int', 3, 'Validation-room attempts for a major version.', { min: 1 }),
  validationTimeout: key('ROOMKEEPER_VALIDATION_TIMEOUT', 'duration', 120_000, 'How long a validation room has to report ready.', { min: 100 }),
  validationAcceptOccupied: key('ROOMKEEPER_VALIDATION_ACCEPT_OCCUPIED', 'bool', false, 'A validation room that reports occupied validates a major version too, as ready does (Maestro\'s roomValidationAcceptOccupiedStatus): for game servers that a matchmaker takes as soon as they start. Off, only ready does.'),
  maestroEnv: key('ROOMKEEPER_MAESTRO_ENV', 'bool', true, 'Also give rooms MAESTRO_SCHEDULER_NAME and MAESTRO_ROOM_ID.'),
  roomRunAsNonRoot: key('ROOMKEEPER_ROOM_RUN_AS_NON_ROOT', 'bool', false, 'Room pods require a non-root user (runAsNonRoot); a game-server image that runs as root then fails to start. Rooms always get seccomp RuntimeDefault, no privilege escalation, no capabilities (but NET_BIND_SERVICE for ports below 1024) and no service-account token.'),
  roomNamespacePsaEnforce: key('ROOMKEEPER_ROOM_NAMESPACE_PSA_ENFORCE', 'string', 'none', 'Pod Security Admission level enforced in room namespaces (pod-security.kubernetes.io/enforce): privileged, baseline, restricted, or none for no label (the cluster default). baseline and restricted refuse hostPort, which every room with ports uses.'),
  roomNamespacePsaWarn: key('ROOMKEEPER_ROOM_NAMESPACE_PSA_WARN', 'string', 'restricted', 'Pod Security Admission level warned about in room namespaces (pod-security.kubernetes.io/warn); none for no label. The API server\'s warnings (every room pod with host ports would violate restricted) are logged by the operator at info, once an hour per namespace and text.'),
  roomNamespacePsaAudit: key('ROOMKEEPER_ROOM_NAMESPACE_PSA_AUDIT', 'string', 'baseline', 'Pod Security Admission level audited in room namespaces (pod-security.kubernetes.io/audit); none for no label.'),
  roomsApiUrl: key('ROOMKEEPER_ROOMS_API_URL', 'string', '', 'Rooms API URL given to rooms as ROOMKEEPER_ROOMS_API_URL (empty: not set).'),
  roomTokenSecret: key('ROOMKEEPER_ROOM_TOKEN_SECRET', 'string', '', 'Secret from which per-room ping tokens are derived (HMAC). Empty: no per-room tokens.', { secret: true }),
  roomTokenPreviousSecret: key('ROOMKEEPER_ROOM_TOKEN_PREVIOUS_SECRET', 'string', '', 'During a rotation of ROOMKEEPER_ROOM_TOKEN_SECRET: the secret the rooms made before it hold; the gateway accepts tokens under both. Empty once no room pod carries the old key id (SECURITY.md).', { secret: true }),

  gatewayPort: key('ROOMKEEPER_GATEWAY_PORT', 'int', 8080, 'Management API port (also /healthz, /readyz, /metrics, /openapi.json).', { min: 0 }),
  roomsPort: key('ROOMKEEPER_ROOMS_PORT', 'int', 8090, 'Rooms API port (pings and events from game rooms).', { min: 0 }),
  gatewayOpsPort: key('ROOMKEEPER_GATEWAY_OPS_PORT', 'int', 8082, 'Gateway health (/healthz, /livez, /readyz) and /metrics port, apart from the API ports: a flood of connections to the management or rooms API cannot starve the probes and get the gateway restarted. The management port answers the same paths too. `npm start` does not open it (one process; use the management port).', { min: 0 }),
  authUsername: key('ROOMKEEPER_AUTH_USERNAME', 'string', '', 'Management API Basic-auth user (or use ROOMKEEPER_AUTH_SECRET_NAME).', { secret: true }),
  authPassword: key('ROOMKEEPER_AUTH_PASSWORD', 'string', '', 'Management API Basic-auth password.', { secret: true }),
  authSecretName: key('ROOMKEEPER_AUTH_SECRET_NAME', 'string', '', 'Kubernetes Secret holding `username` and `password` keys for the management API.'),
  authSecretNamespace: key('ROOMKEEPER_AUTH_SECRET_NAMESPACE', 'string', 'roomkeeper-system', 'Namespace of that Secret.'),
  pingAuth: key('ROOMKEEPER_PING_AUTH', 'bool', true, 'Require the per-room token on pings and events (turn off for Maestro game servers).'),
  maxBodyBytes: key('ROOMKEEPER_MAX_BODY_BYTES', 'int', 1_048_576, 'Largest accepted request body on the management API; larger ones get 413.', { min: 1024 }),
  roomsMaxBodyBytes: key('ROOMKEEPER_ROOMS_MAX_BODY_BYTES', 'int', 16_384, 'Largest accepted request body on the rooms API (pings and events); larger ones get 413.', { min: 1024 }),
  maxConnections: key('ROOMKEEPER_MAX_CONNECTIONS', 'int', 20_000, "Open connections each gateway listener holds at most (rooms keep one open each); more are closed as they arrive. Lowered (its info log at start says so) to what the process's open-files limit leaves room for: the two listeners together keep a quarter of it (at least 1,024) free for the process's own connections to the Kubernetes API server (with `ulimit -n` 20000, as under `npm start` here, 7,500 each). 0: no limit.", { min: 0 }),
  pingFlushInterval: key('ROOMKEEPER_PING_FLUSH_INTERVAL', 'duration', 30_000, 'Unchanged pings are recorded in memory and written (coalesced) at most this often per room. The operator deletes a PingDigest not written for 2 × (ROOMKEEPER_ROOM_PING_TIMEOUT + this): its gateway replica is gone.', { min: 100 }),
  allocationTtl: key('ROOMKEEPER_ALLOCATION_TTL', 'duration', 300_000, 'How long an allocated room is held for the matchmaker when the request names no ttlSeconds; a room that has not reported occupied by then returns to ready (Maestro: 5 min).', { min: 1000 }),
  allocationMaxTtl: key('ROOMKEEPER_ALLOCATION_MAX_TTL', 'duration', 3_600_000, 'Largest allocation TTL granted; a larger ttlSeconds is capped to it (the answer says so).', { min: 1000 }),
  allocationNoRoomMaestro: key('ROOMKEEPER_ALLOCATION_NO_ROOM_MAESTRO', 'bool', false, 'Answer an allocation that finds no ready room as Maestro does (500, code 2) instead of 429 with Retry-After (code 8).'),
  pingAnswerAllocation: key('ROOMKEEPER_PING_ANSWER_ALLOCATION', 'bool', true, 'Tell a room in the answer to its ping that a matchmaker allocated it ({"success":true,"allocation":{...}}; the SDK reads it). false answers {"success":true} only, as Maestro, for game servers whose JSON parser refuses unknown fields (protojson without DiscardUnknown); their rooms are still allocated, they are only not told.'),
  forwardResyncInterval: key('ROOMKEEPER_FORWARD_RESYNC_INTERVAL', 'duration', 30_000, 'A ping that changes nothing is forwarded at most this often per room (status changes always go at once); 0 forwards every ping, as Maestro.', { min: 0 }),
  shutdownTimeout: key('ROOMKEEPER_SHUTDOWN_TIMEOUT', 'duration', 10_000, 'Graceful shutdown budget on SIGTERM.', { min: 0 }),
  shutdownDrainDelay: key('ROOMKEEPER_SHUTDOWN_DRAIN_DELAY', 'duration', 5_000, 'Gateway, on SIGTERM: for this long /readyz answers 503 (shutting down) while every request is still served, since endpoints and load balancers learn of a stopping pod after it got the signal; then it stops accepting and finishes within ROOMKEEPER_SHUTDOWN_TIMEOUT. 0: no drain. A pod\'s grace period must cover both (the chart\'s does).', { min: 0 }),
} as const;

type Schema = typeof CONFIG_SCHEMA;
export type Config = { readonly [K in keyof Schema]: Schema[K]['default'] extends undefined ? KindType<Schema[K]['kind']> | undefined : KindType<Schema[K]['kind']> };

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** Pod Security Standards levels, and `none` for no label. */
const PSA_LEVELS: readonly unknown[] = ['none', 'privileged', 'baseline', 'restricted'];

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

function parseValue(spec: KeySpec, raw: string): { value?: unknown; problem?: string } {
  const v = raw.trim();
  switch (spec.kind) {
    case 'string':
      return { value: raw };
    case 'url':
      try { new URL(v); return { value: v }; } catch { return { problem: `${spec.env}: not a URL: ${JSON.stringify(v)}` }; }
    case 'bool':
      if (/^(1|true|yes|on)$/i.test(v)) return { value: true };
      if (/^(0|false|no|off)$/i.test(v)) return { value: false };
      return { problem: `${spec.env}: expected true or false, got ${JSON.stringify(v)}` };
    case 'int':
    case 'number': {
      const n = Number(v);
      if (v === '' || !Number.isFinite(n) || (spec.kind === 'int' && !Number.isInteger(n))) {
        return { problem: `${spec.env}: expected ${spec.kind === 'int' ? 'an integer' : 'a number'}, got ${JSON.stringify(v)}` };
      }
      return { value: n };
    }
    case 'duration': {
      const m = DURATION.exec(v);
      if (!m) return { problem: `${spec.env}: expected a duration such as 500ms, 5s, 2m, 1h, got ${JSON.stringify(v)}` };
      return { value: Math.round(Number(m[1]) * (UNIT_MS[m[2] ?? 'ms'] ?? 1)) };
    }
  }
}

/**
 * Builds the frozen configuration from the environment plus explicit overrides (tests and
 * `npm start` pass overrides rather than mutating process.env). Throws ConfigError listing
 * every problem.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Record<keyof Schema, unknown>> = {}): Config {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(CONFIG_SCHEMA) as [keyof Schema, KeySpec][]) {
    let value: unknown = spec.default;
    const raw = env[spec.env];
    if (raw !== undefined && raw !== '') {
      const parsed = parseValue(spec, raw);
      if (parsed.problem) problems.push(parsed.problem);
      else value = parsed.value;
    }
    if (name in overrides) value = overrides[name];
    if (spec.min !== undefined && typeof value === 'number' && value < spec.min) {
      problems.push(`${spec.env}: must be at least ${spec.min}, got ${value}`);
    }
    out[name] = value;
  }
  if (typeof out.renewDeadline === 'number' && typeof out.leaseDuration === 'number' && out.renewDeadline >= out.leaseDuration) {
    problems.push('ROOMKEEPER_LEADER_RENEW_DEADLINE must be shorter than ROOMKEEPER_LEADER_LEASE_DURATION');
  }
  // A leader retries its renewal within the deadline, and the operators of other releases look at
  // each other's Leases within a lease duration (operator/src/runtime/other-operators.ts).
  if (typeof out.retryPeriod === 'number' && typeof out.renewDeadline === 'number' && out.retryPeriod >= out.renewDeadline) {
    problems.push('ROOMKEEPER_LEADER_RETRY_PERIOD must be shorter than ROOMKEEPER_LEADER_RENEW_DEADLINE');
  }
  for (const name of ['roomNamespacePsaEnforce', 'roomNamespacePsaWarn', 'roomNamespacePsaAudit'] as const) {
    if (typeof out[name] === 'string' && !PSA_LEVELS.includes(out[name])) {
      problems.push(`${CONFIG_SCHEMA[name].env}: expected privileged, baseline, restricted or none, got ${JSON.stringify(out[name])}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(out) as Config;
}

/**
 * What the operator refuses to start with beyond what `loadConfig` checks: settings only it reads,
 * judged against the gateways' (the chart gives it their flush interval). The gateway, which reads
 * none of them, starts whatever they are.
 */
export function operatorConfigProblems(config: Pick<Config, 'roomSilenceTimeout' | 'pingFlushInterval'>): string[] {
  // A room is heard by the operator only at its gateway's next digest flush.
  if (config.roomSilenceTimeout > 0 && config.roomSilenceTimeout <= config.pingFlushInterval) {
    return [`ROOMKEEPER_ROOM_SILENCE_TIMEOUT (${config.roomSilenceTimeout} ms) must be longer than ROOMKEEPER_PING_FLUSH_INTERVAL (${config.pingFlushInterval} ms), or 0 to mark no room silent: a ping reaches the operator only at its gateway's next flush, so rooms that ping would be marked silent, and not allocated, between two flushes`];
  }
  return [];
}

/** A Markdown table of every setting (env, default, meaning) for the README and chart docs. */
export function describeConfig(): string {
  const rows = Object.values(CONFIG_SCHEMA).map((s: KeySpec) => {
    const def = s.secret ? '(secret)' : s.default === undefined ? '' : s.kind === 'duration' ? `${String(s.default)}ms` : JSON.stringify(s.default);
    return `| \`${s.env}\` | ${def} | ${s.help} |`;
  });
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}
