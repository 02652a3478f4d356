import pino from 'pino';
import { accessLogger } from '../../src/http/requestLog';
import { REDACTED_PATHS, REDACTION_CENSOR } from '../../src/logger';
import { LineBatcher } from '../../src/observability/logSink';

const line = (n: number) => `{"n":${n}}\n`;

describe('LineBatcher', () => {
  test('holds lines until a chunk is full, then hands them on as one write, in order', () => {
    const writes: string[] = [];
    const batcher = new LineBatcher({ write: (chunk: string) => writes.push(chunk) }, 30);
    batcher.write(line(1)); // 9 characters each
    batcher.write(line(2));
    batcher.write(line(3));
    expect(writes).toEqual([]);
    batcher.write(line(4)); // 36 >= 30
    expect(writes).toEqual([line(1) + line(2) + line(3) + line(4)]);
    batcher.write(line(5));
    expect(writes).toHaveLength(1);
  });

  test('release writes what is pending, and nothing when nothing is', () => {
    const writes: string[] = [];
    const batcher = new LineBatcher({ write: (chunk: string) => writes.push(chunk) }, 1 << 20);
    batcher.release();
    expect(writes).toEqual([]);
    batcher.write(line(1));
    batcher.release();
    batcher.release();
    expect(writes).toEqual([line(1)]);
  });

  test("pino's flush writes the pending lines and then calls back", () => {
    const writes: string[] = [];
    const batcher = new LineBatcher({ write: (chunk: string) => writes.push(chunk) }, 1 << 20);
    const logger = pino({ base: undefined, timestamp: false }, batcher);
    logger.info('one');
    logger.info('two');
    expect(writes).toEqual([]);
    let flushed = false;
    logger.flush(() => {
      flushed = true;
    });
    expect(flushed).toBe(true);
    expect(
      writes
        .join('')
        .trim()
        .split('\n')
        .map((text) => JSON.parse(text).msg),
    ).toEqual(['one', 'two']);
  });
});

describe('access log redaction', () => {
  const capture = () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { redact: { paths: [...REDACTED_PATHS], censor: REDACTION_CENSOR } },
      { write: (text: string) => void lines.push(JSON.parse(text) as Record<string, unknown>) },
    );
    return { logger, lines };
  };

  test('the access logger still blanks a top-level key', () => {
    const { logger, lines } = capture();
    accessLogger(logger).info({ key: 'sk_secret', keyId: 'key_1' }, 'request');
    expect(lines[0]).toMatchObject({ key: REDACTION_CENSOR, keyId: 'key_1' });
  });

  test('the parent logger keeps its wildcard paths after an access logger is made from it', () => {
    const { logger, lines } = capture();
    accessLogger(logger);
    logger.warn({ body: { key: 'sk_secret' }, req: { headers: { authorization: 'Bearer x' } } });
    expect(lines[0]).toMatchObject({
      body: { key: REDACTION_CENSOR },
      req: { headers: { authorization: REDACTION_CENSOR } },
    });
  });
});
