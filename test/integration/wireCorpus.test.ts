/**
 * The wire corpus: a fixed sequence of 341 raw HTTP requests (test/support/wireCorpus.ts, which
 * runs each operation's steps from its cases file in test/cases/ in one fixed order) whose answers
 * were recorded from the build at the time into test/fixtures/wireCorpus.json. A refactoring that
 * claims "behaviour unchanged" must give byte-identical answers, request ids and timestamps aside.
 *
 *   npx jest --ci -w 1 test/integration/wireCorpus.test.ts                           compare
 *   KEYWARD_RECORD_CORPUS=1 npx jest --ci -w 1 test/integration/wireCorpus.test.ts   record
 *   (then `npx prettier --write test/fixtures/wireCorpus.json`; the comparison parses the file,
 *   so its formatting does not matter)
 *
 * What is compared, per request: the status; every response header but `date`, `connection` and
 * `keep-alive` (names lower-cased, sorted by name, duplicates kept, each as `name: value`); and
 * the raw body bytes as a string. Also compared: the request itself (label, method, path, the
 * headers the scenario set, the body), so a scenario edited without re-recording fails too.
 *
 * Normalization, the same for the recorded and the replayed answers, by textual substitution on
 * the raw strings (JSON is never re-serialised, so a change of key order or spacing shows):
 *  1. Generated key plaintexts (the `key` of a successful keys.createKey answer) → `<plaintext_N>`,
 *     and the `"start":"…"` shown for such a key → `"start":"<start_N>"`. Plaintexts the scenario
 *     chose itself (migrations) stay literal.
 *  2. Root key secrets (only ever in the request's Authorization) → `<root_key:NAME>`.
 *  3. Ids the server generated, `(ws|api|key|rk|rlns|rlor)_` + 22 base58 characters →
 *     `<api_1>`, `<key_2>`, … numbered per prefix by order of first appearance across the whole
 *     corpus (requests included). The well-formed fake ids of FIXED_IDS stay literal.
 *  4. Request ids `req_…` → `<req>`.
 *  5. Unix-ms timestamps: a 13-digit number (not part of a longer run of digits or a decimal)
 *     within 40 days of the run (createdAt, updatedAt, expires, reset, lastRefillAt, at) → `<ms>`.
 *     Fixed far-away values (e.g. `8640000000000000` in a message) stay exact.
 *  6. Liveness's `"latencyMs":<float>` → `"latencyMs":<latency>`.
 *  7. `ratelimit-reset` and `retry-after` header values: seconds from the Redis clock's now to
 *     the bucket's next refill; whether a request lands before or after a second boundary is
 *     timing, so a positive integer → `<s>`. Any other value (0, a fraction, text) stays exact.
 *  8. `content-length` → `<len>` when it equals the byte length of the raw body (which itself is
 *     compared after 1–6; plaintexts and latencies vary in length); otherwise it stays exact.
 *  9. A key's `,"lastUsedAt":<ms>` is left out: whether the node's flush (every second) wrote a
 *     verification before a later read is timing (test/integration/lastUsed.test.ts shows it).
 * Request bodies over 1 KiB are stored as their length, SHA-256 and first 120 characters (after
 * normalization); bodies that are not UTF-8 as base64.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { startTopology, type Topology } from '../support/topology';
import { FIXED_IDS, runScenario, type Exchange, type RootKeyName } from '../support/wireCorpus';

const FIXTURE = join(__dirname, '..', 'fixtures', 'wireCorpus.json');
const RECORD = process.env.KEYWARD_RECORD_CORPUS === '1';
const DAY = 86_400_000;
const TIMESTAMP_WINDOW_MS = 40 * DAY;
const STORED_BODY_MAX = 1024;
const DROPPED_HEADERS = new Set(['date', 'connection', 'keep-alive']);
const CLOCK_SECONDS_HEADERS = new Set(['ratelimit-reset', 'retry-after']);

interface StoredRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  bodyBase64?: string;
  chunks?: string;
}

interface StoredAnswer {
  status: number;
  headers: string[];
  body: string;
  bodyBase64?: string;
}

interface CorpusEntry {
  label: string;
  request: StoredRequest;
  response: StoredAnswer;
}

interface CorpusFile {
  about: string;
  entries: CorpusEntry[];
}

const ID =
  /(?<![A-Za-z0-9])(ws|api|key|rk|rlns|rlor|id|perm|role)_[1-9A-HJ-NP-Za-km-z]{22}(?![A-Za-z0-9])/g;
const REQUEST_ID = /(?<![A-Za-z0-9])req_[1-9A-HJ-NP-Za-km-z]{22}(?![A-Za-z0-9])/g;
const THIRTEEN_DIGITS = /(?<![\d.])\d{13}(?![\d.])/g;
const LATENCY = /"latencyMs":-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/g;
/** Normalization 9: the whole field, with the comma before it. */
const LAST_USED = /,"lastUsedAt":<ms>/g;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decodeUtf8(bytes: Buffer): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** State shared across the whole corpus: numbering is by first appearance in the entire run. */
class Normalizer {
  private readonly plaintexts: { plaintext: string; start: string; label: string }[] = [];
  private readonly ids = new Map<string, string>();
  private readonly perPrefix = new Map<string, number>();
  private readonly fixed = new Set(FIXED_IDS);

  constructor(
    private readonly rootKeys: ReadonlyMap<RootKeyName, string>,
    private readonly window: { from: number; to: number },
  ) {}

  /** A generated plaintext shows up first in the answer of a successful keys.createKey. */
  learnPlaintext(exchange: Exchange): void {
    if (exchange.answer.status !== 200 || !exchange.request.path.startsWith('/v1/keys.createKey'))
      return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(exchange.answer.body.toString('utf8'));
    } catch {
      return;
    }
    const key = (parsed as { key?: unknown }).key;
    if (typeof key !== 'string') return;
    // The random body is base58, which has no `_`: the prefix ends at the last `_`.
    const marker = key.lastIndexOf('_');
    const start = marker < 0 ? key.slice(0, 4) : key.slice(0, marker + 5);
    this.plaintexts.push({ plaintext: key, start, label: `${this.plaintexts.length + 1}` });
  }

  text(raw: string): string {
    let text = raw;
    // Longest first, so that no plaintext is replaced inside a longer one.
    const byLength = [...this.plaintexts].sort((a, b) => b.plaintext.length - a.plaintext.length);
    for (const { plaintext, label } of byLength) {
      text = text.split(plaintext).join(`<plaintext_${label}>`);
    }
    for (const { start, label } of this.plaintexts) {
      text = text.replace(
        new RegExp(`"start":"${escapeRegExp(start)}"`, 'g'),
        `"start":"<start_${label}>"`,
      );
    }
    for (const [name, secret] of this.rootKeys)
      text = text.split(secret).join(`<root_key:${name}>`);
    text = text.replace(ID, (id: string, prefix: string) => {
      if (this.fixed.has(id)) return id;
      let symbol = this.ids.get(id);
      if (symbol === undefined) {
        const n = (this.perPrefix.get(prefix) ?? 0) + 1;
        this.perPrefix.set(prefix, n);
        symbol = `<${prefix}_${n}>`;
        this.ids.set(id, symbol);
      }
      return symbol;
    });
    text = text.replace(REQUEST_ID, '<req>');
    text = text.replace(THIRTEEN_DIGITS, (digits) => {
      const value = Number(digits);
      return value >= this.window.from && value <= this.window.to ? '<ms>' : digits;
    });
    return text.replace(LATENCY, '"latencyMs":<latency>').replace(LAST_USED, '');
  }

  request(exchange: Exchange): StoredRequest {
    const { request } = exchange;
    const stored: StoredRequest = {
      method: request.method,
      path: this.text(request.path),
      headers: Object.fromEntries(
        Object.entries(request.headers)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([name, value]) => [name, this.text(value)]),
      ),
    };
    if (request.body !== undefined) {
      const bytes = Buffer.from(request.body);
      const text = decodeUtf8(bytes);
      if (text === undefined) stored.bodyBase64 = bytes.toString('base64');
      else stored.body = summarize(this.text(text));
    }
    if (request.chunks) {
      const all = Buffer.concat(request.chunks);
      stored.chunks = `${request.chunks.length} chunks, ${all.length} bytes, sha256 ${sha256(all)}`;
    }
    return stored;
  }

  answer(exchange: Exchange): StoredAnswer {
    const { answer } = exchange;
    const text = decodeUtf8(answer.body);
    const headers: [string, string][] = [];
    for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) {
      const name = answer.rawHeaders[i]!.toLowerCase();
      const value = answer.rawHeaders[i + 1]!;
      if (DROPPED_HEADERS.has(name)) continue;
      let normalized: string;
      if (CLOCK_SECONDS_HEADERS.has(name) && /^[1-9]\d*$/.test(value)) normalized = '<s>';
      else if (name === 'content-length' && value === String(answer.body.length))
        normalized = '<len>';
      else normalized = this.text(value);
      headers.push([name, normalized]);
    }
    // Stable: values of a repeated header keep their order.
    headers.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return {
      status: answer.status,
      headers: headers.map(([name, value]) => `${name}: ${value}`),
      body: text === undefined ? '' : this.text(text),
      ...(text === undefined ? { bodyBase64: answer.body.toString('base64') } : {}),
    };
  }
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function summarize(text: string): string {
  if (text.length <= STORED_BODY_MAX) return text;
  return `<${Buffer.byteLength(text)} bytes, sha256 ${sha256(text)}> ${text.slice(0, 120)}…`;
}

function normalize(
  exchanges: readonly Exchange[],
  rootKeys: ReadonlyMap<RootKeyName, string>,
  window: { from: number; to: number },
): CorpusEntry[] {
  const normalizer = new Normalizer(rootKeys, window);
  return exchanges.map((exchange) => {
    const request = normalizer.request(exchange);
    normalizer.learnPlaintext(exchange);
    return { label: exchange.label, request, response: normalizer.answer(exchange) };
  });
}

function loadFixture(): CorpusFile {
  if (!existsSync(FIXTURE)) {
    throw new Error(
      `${FIXTURE} is missing: record it on the reference build with KEYWARD_RECORD_CORPUS=1`,
    );
  }
  return JSON.parse(readFileSync(FIXTURE, 'utf8')) as CorpusFile;
}

const show = (value: unknown) => JSON.stringify(value, null, 2);

let topology: Topology;

beforeAll(async () => {
  topology = await startTopology({
    nodes: 1,
    env: {
      // Parsing the 600 KB hostile bodies on two busy cores can lag the event loop past the
      // topology's 1 s command deadline, which would turn a 400 into a 503.
      KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '5000',
    },
  });
});

afterAll(async () => {
  if (topology) await topology.stop();
});

test('the answers to the wire corpus are byte-identical to the recorded ones', async () => {
  // Read first: in compare mode a missing fixture fails before any request is sent.
  const expected = RECORD ? undefined : loadFixture();
  const from = Date.now() - TIMESTAMP_WINDOW_MS;
  const { exchanges, rootKeys } = await runScenario({
    baseUrl: topology.nodes[0]!.url,
    rootKey: topology.rootKey,
    workspaceId: topology.workspaceId,
    newRootKey: topology.newRootKey,
  });
  const entries = normalize(exchanges, rootKeys, { from, to: Date.now() + TIMESTAMP_WINDOW_MS });

  if (expected === undefined) {
    mkdirSync(dirname(FIXTURE), { recursive: true });
    const file: CorpusFile = {
      about:
        'Answers of the keyward build this was recorded on; see test/integration/wireCorpus.test.ts',
      entries,
    };
    writeFileSync(FIXTURE, `${JSON.stringify(file, null, 2)}\n`);
    return;
  }

  const problems: string[] = [];
  const labels = (list: readonly CorpusEntry[]) => list.map((entry) => entry.label);
  if (!isDeepStrictEqual(labels(entries), labels(expected.entries))) {
    problems.push(
      `the scenario differs from the recording (${entries.length} requests now, ${expected.entries.length} recorded): re-record if the change is intended`,
    );
  }
  for (const [index, actual] of entries.entries()) {
    const recorded = expected.entries[index];
    if (recorded === undefined || recorded.label !== actual.label) continue;
    if (!isDeepStrictEqual(recorded.request, actual.request)) {
      problems.push(
        `#${index} "${actual.label}": the request differs from the recorded one\n` +
          `expected: ${show(recorded.request)}\nactual:   ${show(actual.request)}`,
      );
    } else if (!isDeepStrictEqual(recorded.response, actual.response)) {
      problems.push(
        `#${index} "${actual.label}": ${actual.request.method} ${actual.request.path}\n` +
          `expected: ${show(recorded.response)}\nactual:   ${show(actual.response)}`,
      );
    }
  }
  if (problems.length > 0) {
    throw new Error(
      `${problems.length} of ${entries.length} answers differ from ${FIXTURE}:\n\n` +
        problems.slice(0, 10).join('\n\n') +
        (problems.length > 10 ? `\n\n… and ${problems.length - 10} more` : ''),
    );
  }
  expect(entries).toHaveLength(expected.entries.length);
}, 180_000);
