import { createJsonLogger, describeError, ERROR_TEXT_MAX_CHARS } from '../../../shared/logger';

describe('the JSON logger', () => {
  function capture(level: 'debug' | 'info' = 'info') {
    const lines: string[] = [];
    const logger = createJsonLogger(level, (line) => lines.push(line), { service: 'PaymentApi-test' });
    return { logger, entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
  }

  it('writes level, timestamp and message first, then the fixed fields, the context and the line own fields', () => {
    const { logger, entries } = capture();

    logger.setContext({ function_request_id: 'req-1', cold_start: true });
    logger.info('request accepted', { status: 200 });

    const [entry] = entries();
    expect(Object.keys(entry ?? {})).toEqual([
      'level',
      'timestamp',
      'message',
      'service',
      'function_request_id',
      'cold_start',
      'status',
    ]);
    expect(entry).toMatchObject({ level: 'info', service: 'PaymentApi-test', cold_start: true, status: 200 });
  });

  it('replaces the context on each call, and clears it with an empty one', () => {
    const { logger, entries } = capture();

    logger.setContext({ function_request_id: 'req-1' });
    logger.info('one');
    logger.setContext({ function_request_id: 'req-2', apiRequestId: 'api-2' });
    logger.info('two');
    logger.setContext({});
    logger.info('between invocations');

    expect(entries().map((entry) => [entry.function_request_id, entry.apiRequestId])).toEqual([
      ['req-1', undefined],
      ['req-2', 'api-2'],
      [undefined, undefined],
    ]);
  });

  it('leaves out lines below its level', () => {
    const { logger, entries } = capture('info');

    logger.debug('noise');
    logger.warn('kept');

    expect(entries().map((entry) => entry.message)).toEqual(['kept']);
  });
});

describe('describeError', () => {
  it('cuts an endpoint error text to 256 characters, the cut marked (a 900 KB answer made a 900 KB log line)', () => {
    const huge = Object.assign(new Error('<html>' + 'x'.repeat(900_000)), { name: 'InternalServiceError' });

    const described = describeError(huge);

    expect(described).toHaveLength(256);
    expect(described.startsWith('InternalServiceError: <html>xxx')).toBe(true);
    expect(described.endsWith('x...')).toBe(true);
  });

  it('never cuts a surrogate pair in half', () => {
    const error = new Error('a'.repeat(ERROR_TEXT_MAX_CHARS - 11) + '😀'.repeat(100));

    const described = describeError(error);

    expect(described.length).toBeLessThanOrEqual(ERROR_TEXT_MAX_CHARS);
    expect(described).not.toMatch(/[\uD800-\uDBFF]\.\.\.$/);
    expect(Buffer.from(described, 'utf8').toString('utf8')).toBe(described);
  });

  it('leaves a short error text whole', () => {
    expect(describeError(new Error('Rate exceeded'))).toBe('Error: Rate exceeded');
  });
});
