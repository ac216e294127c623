/**
 * Benchmark parts that must not share a process (the API server, the operator, the simulated
 * rooms, the load generator) run as forked children with an IPC channel. The child serves named
 * calls (`serveParent`); the parent starts it and calls them (`forkChild`). The child is the
 * Node 22 process itself (tsx is loaded with `--import`), so its pid is the one whose memory
 * is measured.
 */
import { fork, type ChildProcess } from 'node:child_process';

export type Handlers = Record<string, (arg: unknown) => unknown>;

interface CallMessage { kind: 'call'; id: number; method: string; arg: unknown }
interface ReplyMessage { kind: 'reply'; id: number; result?: unknown; error?: string }
interface ReadyMessage { kind: 'ready'; payload: unknown }
interface FailedMessage { kind: 'failed'; error: string }
type ChildMessage = ReplyMessage | ReadyMessage | FailedMessage;
/** A message from the other process: one of `M`, or anything else a stray `process.send` put on the channel (ignored). */
type Received<M> = M | { kind?: undefined };

class ChildFailedError extends Error {
  constructor(readonly script: string, message: string) {
    super(`${script}: ${message}`);
    this.name = 'ChildFailedError';
  }
}

export interface ChildHandle<R> {
  readonly pid: number;
  /** What the child sent once it was ready. */
  readonly ready: R;
  call<T>(method: string, arg?: unknown): Promise<T>;
  /** Calls the child's `stop` handler, then waits for it to exit (SIGKILL after `timeoutMs`). */
  stop(timeoutMs?: number): Promise<void>;
}

export interface ForkOptions {
  /** Passed to the child as its first argument (JSON). */
  arg?: unknown;
  env?: NodeJS.ProcessEnv;
  /** Extra Node flags (e.g. `--cpu-prof`). */
  nodeFlags?: string[];
  /** The script is compiled JavaScript (`compiledScript()`): run by plain node, as in production. */
  compiled?: boolean;
  /** How long the child may take to report ready (default 60 s). */
  startTimeoutMs?: number;
}

/** Forks a bench child script and resolves once it reported ready. */
export function forkChild<R>(script: string, options: ForkOptions = {}): Promise<ChildHandle<R>> {
  const child: ChildProcess = fork(script, [JSON.stringify(options.arg ?? null)], {
    execArgv: [...(options.compiled ? [] : ['--import', 'tsx']), ...(options.nodeFlags ?? [])],
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextId = 1;
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => {
    exited = true;
    for (const p of pending.values()) p.reject(new ChildFailedError(script, 'exited during a call'));
    pending.clear();
    resolve();
  }));

  return new Promise<ChildHandle<R>>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new ChildFailedError(script, `not ready within ${options.startTimeoutMs ?? 60_000} ms`));
    }, options.startTimeoutMs ?? 60_000);
    void exit.then(() => {
      clearTimeout(timer);
      reject(new ChildFailedError(script, 'exited before it was ready'));
    });
    child.on('message', (raw: unknown) => {
      const msg = raw as Received<ChildMessage>;
      if (msg.kind === 'failed') {
        clearTimeout(timer);
        reject(new ChildFailedError(script, msg.error));
      } else if (msg.kind === 'ready') {
        clearTimeout(timer);
        resolve({
          pid: child.pid ?? -1,
          ready: msg.payload as R,
          call<T>(method: string, arg?: unknown): Promise<T> {
            if (exited) return Promise.reject(new ChildFailedError(script, 'has exited'));
            const id = nextId++;
            return new Promise<T>((res, rej) => {
              pending.set(id, { resolve: res, reject: rej });
              const call: CallMessage = { kind: 'call', id, method, arg };
              child.send(call);
            });
          },
          async stop(timeoutMs = 20_000): Promise<void> {
            if (exited) return;
            const kill = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
            const id = nextId++;
            child.send({ kind: 'call', id, method: 'stop', arg: null } satisfies CallMessage);
            await exit;
            clearTimeout(kill);
          },
        });
      } else if (msg.kind === 'reply') {
        const p = pending.get(msg.id);
        pending.delete(msg.id);
        if (msg.error !== undefined) p?.reject(new ChildFailedError(script, msg.error));
        else p?.resolve(msg.result);
      }
    });
  });
}

/** The JSON argument the parent passed to this child (the child knows its shape). */
export function childArg(): unknown {
  return JSON.parse(process.argv[2] ?? 'null') as unknown;
}

/**
 * Child side: runs `start`, reports its payload as ready, then answers calls. A `stop` handler
 * is awaited and the process exits after it.
 */
export function serveParent<R>(start: () => Promise<{ payload: R; handlers: Handlers; stop: () => Promise<void> }>): void { // eslint-disable-line @typescript-eslint/no-unnecessary-type-parameters -- each child names its payload type (`serveParent<GatewayReady>`), which checks what it sends against what its parent reads
  const send = (m: ChildMessage) => process.send?.(m);
  start().then(({ payload, handlers, stop }) => {
    process.on('message', (raw: unknown) => {
      const msg = raw as Received<CallMessage>;
      if (msg.kind !== 'call') return;
      if (msg.method === 'stop') {
        void stop().catch(() => undefined).finally(() => process.exit(0));
        return;
      }
      const handler = handlers[msg.method];
      Promise.resolve()
        .then(() => {
          if (!handler) throw new Error(`no handler ${msg.method}`);
          return handler(msg.arg);
        })
        .then(
          (result) => send({ kind: 'reply', id: msg.id, result }),
          (err: unknown) => send({ kind: 'reply', id: msg.id, error: err instanceof Error ? err.message : String(err) }),
        );
    });
    // The parent went away: do not linger.
    process.on('disconnect', () => {
      void stop().catch(() => undefined).finally(() => process.exit(0));
    });
    send({ kind: 'ready', payload });
  }, (err: unknown) => {
    send({ kind: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    process.exit(1);
  });
}
