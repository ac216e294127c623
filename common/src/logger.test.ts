import { PassThrough } from 'node:stream';
import { createLogger, toggleDebugOnSignal } from './logger';

function capture(level: string) {
  const stream = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  stream.on('data', (chunk: Buffer) => {
    for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
  });
  return { logger: createLogger('test', { level, stream }), lines };
}

const flushed = () => new Promise((r) => setImmediate(r));

describe('log level at run time', () => {
  it('SIGUSR2 switches a logger and its children to debug and back', async () => {
    const { logger, lines } = capture('info');
    const child = logger.child({ scheduler: 's1', operation: 'op-1', definition: 'add_rooms' });
    const stop = toggleDebugOnSignal(logger);
    try {
      child.debug('hidden');
      process.emit('SIGUSR2', 'SIGUSR2');
      child.debug('shown');
      process.emit('SIGUSR2', 'SIGUSR2');
      child.debug('hidden again');
      child.info('info still shown');
      await flushed();
      expect(lines.map((l) => l.message)).toEqual(['log level changed', 'shown', 'log level changed', 'info still shown']);
      expect(lines[0]).toMatchObject({ level: 'debug', logLevel: 'debug', component: 'test' });
      expect(lines[1]).toMatchObject({ scheduler: 's1', operation: 'op-1', definition: 'add_rooms' });
      expect(lines[2]).toMatchObject({ level: 'debug', logLevel: 'info' });
      expect(logger.level).toBe('info');
    } finally {
      stop();
    }
  });
});

describe('component', () => {
  it('is the root logger\'s, unless a child logger sets its own (npm start runs three components in one process)', async () => {
    const { logger, lines } = capture('info');
    logger.info('root');
    logger.child({ component: 'gateway' }).info('child');
    logger.child({ scheduler: 's1' }).info('plain child');
    await flushed();
    expect(lines.map((l) => [l.message, l.component])).toEqual([['root', 'test'], ['child', 'gateway'], ['plain child', 'test']]);
  });
});

describe('lines of a level that is off', () => {
  it('are dropped before any format runs, by the logger and its children; a level turned on formats them again', async () => {
    const { logger, lines } = capture('info');
    const child = logger.child({ requestId: 'r-1' });
    const formatted = jest.fn(() => 'probe');
    const probe = { toJSON: formatted };
    child.debug('off', { probe });
    logger.log('debug', 'off too', { probe });
    logger.log({ level: 'debug', message: 'off as an object', probe });
    await flushed();
    expect(formatted).not.toHaveBeenCalled();
    logger.level = 'debug';
    child.debug('on', { probe });
    await flushed();
    expect(formatted).toHaveBeenCalled();
    expect(lines.map((l) => [l.message, l.probe, l.requestId])).toEqual([['on', 'probe', 'r-1']]);
  });

  it('are not even built by the level methods: a field of their meta is never read', async () => {
    const { logger, lines } = capture('warn');
    const child = logger.child({ requestId: 'r-2' }).child({ scheduler: 's' });
    const read = jest.fn(() => 'value');
    const meta = Object.defineProperty({}, 'field', { get: read, enumerable: true });
    expect(child.info('off', meta)).toBe(child);
    logger.debug('off too', meta);
    await flushed();
    expect(read).not.toHaveBeenCalled();
    child.warn('on', meta);
    await flushed();
    expect(read).toHaveBeenCalled();
    expect(lines.map((l) => [l.message, l.field, l.requestId, l.scheduler])).toEqual([['on', 'value', 'r-2', 's']]);
  });
});
