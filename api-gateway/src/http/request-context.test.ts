import { PassThrough } from 'node:stream';
import { createLogger } from '../../../common/src/logger';
import { MetricsRegistry } from '../../../common/src/metrics';
import { requestRecorder } from './request-context';

describe('requestRecorder: the access log line', () => {
  function record(status: number): Record<string, unknown>[] {
    const stream = new PassThrough();
    const lines: Record<string, unknown>[] = [];
    stream.on('data', (chunk: Buffer) => chunk.toString().split('\n').filter(Boolean).forEach((l) => lines.push(JSON.parse(l) as Record<string, unknown>)));
    const logger = createLogger('gateway', { level: 'warn', stream });
    requestRecorder({ logger, metrics: new MetricsRegistry(), api: 'management', accessLogLevel: 'info' })({ route: '/schedulers', method: 'DELETE', status, seconds: 0.002, logger: () => logger });
    return lines;
  }

  it('is a warning when the gateway failed (5xx), at the access level when the client asked for a method the path does not take (501)', () => {
    expect(record(503)).toEqual([expect.objectContaining({ level: 'warn', message: 'request', method: 'DELETE', route: '/schedulers', status: 503 })]);
    expect(record(501)).toEqual([]);
    expect(record(404)).toEqual([]);
  });
});
