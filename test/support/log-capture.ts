/** A real JSON logger whose lines a test reads back as objects. */
import { PassThrough } from 'node:stream';
import { createLogger, type Logger } from '../../common/src/logger';

export interface CapturedLogs {
  logger: Logger;
  /** Every line logged so far, parsed (winston writes through a stream: wait for a line, do not expect it at once). */
  readonly lines: Record<string, unknown>[];
}

export function captureLogs(level: string, component = 'test'): CapturedLogs {
  const stream = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  stream.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  return { logger: createLogger(component, { level, stream }), lines };
}
