/**
 * Structured JSON logging (winston) with context.
 *
 * Every process logs one JSON object per line. Callers add context with `child({...})`:
 * a reconcile gets `{controller, key, reconcileId}`, a request gets `{requestId}`.
 * Fields whose names look like secrets are redacted before anything is written.
 */
import winston from 'winston';

export type Logger = winston.Logger;

const SECRET_KEY = /(pass(word)?|secret|token|authorization|credential|api[-_]?key)/i;
const REDACTED = '[redacted]';

function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = SECRET_KEY.test(k) ? REDACTED : redact(v, depth + 1);
  }
  return out;
}

const redactSecrets = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (SECRET_KEY.test(key)) info[key] = REDACTED;
    else if (typeof info[key] === 'object') info[key] = redact(info[key]);
  }
  return info;
});

export interface LoggerOptions {
  level?: string;
  /** Where lines go; defaults to stdout. Tests pass a stream to read what was logged. */
  stream?: NodeJS.WritableStream;
}

/** Creates the root logger of a component (`operator`, `gateway`, `sandbox`). */
export function createLogger(component: string, options: LoggerOptions = {}): Logger {
  const level = options.level ?? process.env.ROOMKEEPER_LOG_LEVEL ?? (process.env.JEST_WORKER_ID ? 'error' : 'info');
  const transport = options.stream
    ? new winston.transports.Stream({ stream: options.stream })
    : new winston.transports.Console();
  return dropDisabledLevels(winston.createLogger({
    level,
    format: winston.format.combine(componentUnlessSet({ component }), redactSecrets(), winston.format.timestamp(), winston.format.errors({ stack: true }), winston.format.json()),
    transports: [transport],
  }));
}

/**
 * A line's `component`: the root logger's, unless a child logger set its own (`npm start` runs the
 * gateway, the operator and the simulation in one process, each under a child). winston's
 * `defaultMeta` is written over a child's fields, so every line said the root's.
 */
const componentUnlessSet = winston.format((info, opts: unknown) => {
  if (info.component === undefined) info.component = (opts as { component?: string }).component;
  return info;
});

/** Where winston keeps a line's level (triple-beam's LEVEL). */
const LEVEL = Symbol.for('level');

/**
 * winston runs every format (redaction, timestamp, JSON) on a line before the transport drops it
 * for its level, so a debug line on a hot path cost that work at level info (4 us a line on its
 * own, measured with a child logger's info line at level warn). Lines of a level that is off are
 * dropped here, before the formats; child loggers write through this `write`, so theirs too. A
 * write callback still runs, as a stream's `write` promises (winston itself passes none).
 * `logger.level` may change at run time (`toggleDebugOnSignal`): it is read on every line.
 */
function dropDisabledLevels(logger: winston.Logger): winston.Logger {
  const write = logger.write.bind(logger) as (info: unknown, ...rest: unknown[]) => boolean;
  const dropping = (info: unknown, ...rest: unknown[]): boolean => {
    const entry = info as { level?: unknown; [LEVEL]?: unknown };
    const level = entry[LEVEL] ?? entry.level;
    if (typeof level !== 'string' || logger.isLevelEnabled(level)) return write(info, ...rest);
    const done = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
    if (done) process.nextTick(done);
    return true;
  };
  logger.write = dropping as typeof logger.write;
  // The level methods (`info`, `debug`, ...) build the line's object before it reaches `write`: a
  // line of a level that is off returns before that. Children inherit these (`child` derives from
  // the logger it is called on).
  const methods = logger as unknown as Record<string, unknown>;
  for (const level of Object.keys(logger.levels)) {
    const method = methods[level];
    if (typeof method !== 'function') continue;
    methods[level] = function (this: winston.Logger, ...args: unknown[]): unknown {
      return this.isLevelEnabled(level) ? (method as (...a: unknown[]) => unknown).apply(this, args) : this;
    };
  }
  return logger;
}

/**
 * A process that could not start (no logger yet, or its configuration refused) says so as one JSON
 * line on stderr, as every other line it writes, so a log pipeline that parses JSON keeps it; then
 * it exits 1. `err`'s message says what failed and what to do.
 */
export function exitOnStartFailure(component: string, err: unknown): never {
  process.stderr.write(`${JSON.stringify({ level: 'error', component, message: 'failed to start', error: String(err), timestamp: new Date().toISOString() })}\n`);
  process.exit(1);
}

/** A logger that drops everything, for tests and benchmarks that do not read logs. */
export function silentLogger(): Logger {
  return winston.createLogger({ silent: true, transports: [new winston.transports.Console({ silent: true })] });
}

/**
 * The log level without a restart: each `signal` (SIGUSR2 by default: `kill -USR2 <pid>`) switches
 * between `debug` and the level the process started with. The switch itself is logged at the
 * more verbose of the two levels, so it shows. Returns a function that stops listening.
 */
export function toggleDebugOnSignal(logger: Logger, signal: NodeJS.Signals = 'SIGUSR2'): () => void {
  const configured = logger.level;
  const handler = (): void => {
    if (logger.level === 'debug') {
      logger.debug('log level changed', { logLevel: configured, signal, next: `send ${signal} again for debug` });
      logger.level = configured;
    } else {
      logger.level = 'debug';
      logger.debug('log level changed', { logLevel: 'debug', signal, next: `send ${signal} again for ${configured}` });
    }
  };
  process.on(signal, handler);
  return () => { process.off(signal, handler); };
}
