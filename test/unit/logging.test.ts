import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { accessLogger } from '../../src/http/requestLog';
import { REDACTED_PATHS, REDACTION_CENSOR } from '../../src/logger';
import { LogSink } from '../../src/observability/logSink';
import { sleep } from '../support/helpers';

const line = (n: number) => `{"n":${n}}\n`;

describe('LogSink', () => {
  let dir: string;
  let file: string;
  let fd: number;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'keyward-log-sink-'));
    file = join(dir, 'out.log');
    fd = openSync(file, 'w');
  });
  afterEach(() => {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });
  const flushed = (sink: LogSink) => new Promise<void>((resolve) => sink.flush(() => resolve()));
  const written = () => readFileSync(file, 'utf8');

  test('holds lines below a chunk until flushed, then writes them in order', async () => {
    const sink = new LogSink(fd, { chunkChars: 1 << 20, maxPendingChars: 1 << 22 });
    sink.write(line(1));
    sink.write(line(2));
    await sleep(20);
    expect(written()).toBe('');
    await flushed(sink);
    expect(written()).toBe(line(1) + line(2));
  });

  test('a full chunk leaves on its own, and lines written meanwhile follow it in order', async () => {
    const sink = new LogSink(fd, { chunkChars: 30, maxPendingChars: 1 << 20 });
    const lines = Array.from({ length: 1000 }, (_, n) => line(n));
    for (const text of lines) sink.write(text);
    await flushed(sink);
    expect(written()).toBe(lines.join(''));
    expect(sink.takeDropped()).toBe(0);
  });

  test('while a write is in flight, lines past the limit are dropped and counted', async () => {
    const sink = new LogSink(fd, { chunkChars: 8, maxPendingChars: 24 });
    sink.write(line(0)); // 8 characters: a chunk, now in flight
    for (let n = 1; n <= 10; n++) sink.write(line(n)); // 3 fit in 24 characters, 7 do not
    expect(sink.takeDropped()).toBe(7);
    expect(sink.takeDropped()).toBe(0);
    await flushed(sink);
    expect(written()).toBe(line(0) + line(1) + line(2) + line(3));
  });

  test('a write that fails counts its lines as dropped instead of throwing', async () => {
    const readOnly = openSync(file, 'r');
    const sink = new LogSink(readOnly, { chunkChars: 1, maxPendingChars: 1 << 20 });
    sink.write(line(1) + line(2));
    await flushed(sink);
    closeSync(readOnly);
    expect(sink.takeDropped()).toBe(2);
    expect(written()).toBe('');
  });

  test('flushSync writes what is pending at once', () => {
    const sink = new LogSink(fd, { chunkChars: 1 << 20, maxPendingChars: 1 << 22 });
    sink.write(line(1));
    sink.flushSync();
    expect(written()).toBe(line(1));
  });

  test("pino's flush calls back once the lines are written", async () => {
    const sink = new LogSink(fd, { chunkChars: 1 << 20, maxPendingChars: 1 << 22 });
    const logger = pino({ base: undefined, timestamp: false }, sink);
    logger.info('one');
    logger.info('two');
    await new Promise<void>((resolve) => logger.flush(() => resolve()));
    expect(
      written()
        .trim()
        .split('\n')
        .map((text) => (JSON.parse(text) as { msg: string }).msg),
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
