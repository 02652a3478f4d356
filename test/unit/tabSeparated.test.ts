import {
  batchBody,
  RATELIMIT_COLUMNS,
  VERIFICATION_COLUMNS,
} from '../../src/analytics/clickhouse/batchBody';
import { TabSeparatedWriter } from '../../src/analytics/clickhouse/tabSeparated';

/** What one writer call leaves, as text. */
function written(write: (writer: TabSeparatedWriter) => TabSeparatedWriter): string {
  return write(new TabSeparatedWriter(1)).finish().toString('utf8');
}

test('plain ASCII is written as it is', () => {
  expect(written((w) => w.string('key_3ZhQ9xk2 plan=pro "x" [a],{b}'))).toBe(
    'key_3ZhQ9xk2 plan=pro "x" [a],{b}',
  );
  expect(written((w) => w.string(''))).toBe('');
});

test('every character TabSeparated treats as special is escaped as ClickHouse writes it', () => {
  expect(written((w) => w.string("a\tb\nc\rd\\e'f\0g\bh\fi"))).toBe(
    "a\\tb\\nc\\rd\\\\e\\'f\\0g\\bh\\fi",
  );
});

test('non-ASCII text is UTF-8, escaped after its first non-ASCII character too', () => {
  expect(written((w) => w.string('é'))).toBe('é');
  expect(written((w) => w.string('a\tb→c\td\\😀\n'))).toBe('a\\tb→c\\td\\\\😀\\n');
  expect(written((w) => w.string('日本語'))).toBe('日本語');
  // Not well-formed UTF-16: a lone surrogate has no UTF-8, and is written as U+FFFD.
  expect(written((w) => w.string('a\ud800b'))).toBe('a\ufffdb');
});

test('an array of strings is quoted element by element', () => {
  expect(written((w) => w.strings([]))).toBe('[]');
  expect(written((w) => w.strings(['plan=pro']))).toBe("['plan=pro']");
  expect(written((w) => w.strings(["it's", 'a,b', ']', '', 'tab\there', 'ü']))).toBe(
    "['it\\'s','a,b',']','','tab\\there','ü']",
  );
});

test('integers as digits; the buffer grows past its hint', () => {
  const long = 'x'.repeat(10_000);
  expect(
    written((w) => w.integer(1_764_230_000_000).tab().integer(0).tab().string(long).endRow()),
  ).toBe(`1764230000000\t0\t${long}\n`);
});

test("a batch of verifications: one line per row, the batch's region and id at its end", () => {
  const { columns, body } = batchBody(
    'key_verifications_v1',
    [
      {
        request_id: 'req_1',
        time: 1_764_230_000_000,
        workspace_id: 'ws_1',
        key_space_id: 'api_1',
        identity_id: 'id_1',
        external_id: 'user\t1',
        key_id: 'key_1',
        outcome: 'VALID',
        tags: ['a', "b'c"],
        spent_credits: 3,
        client_ip: '203.0.113.9',
      },
      {
        request_id: '',
        time: 1_764_230_000_001,
        workspace_id: 'ws_1',
        key_space_id: '',
        identity_id: '',
        external_id: '',
        key_id: '',
        outcome: 'NOT_FOUND',
        tags: [],
        spent_credits: 0,
      },
    ],
    'eu\\west',
    'kw-node-1',
  );
  expect(columns).toBe(VERIFICATION_COLUMNS);
  expect(body.toString('utf8')).toBe(
    "req_1\t1764230000000\tws_1\tapi_1\tid_1\tuser\\t1\tkey_1\tVALID\t['a','b\\'c']\t3\t203.0.113.9\teu\\\\west\tkw-node-1\n" +
      '\t1764230000001\tws_1\t\t\t\t\tNOT_FOUND\t[]\t0\t\teu\\\\west\tkw-node-1\n',
  );
});

test('a batch of standalone limits', () => {
  const { columns, body } = batchBody(
    'ratelimits_v1',
    [
      {
        request_id: 'req_2',
        time: 5,
        workspace_id: 'ws_1',
        namespace_id: 'ns_1',
        identifier: 'user\n42',
        passed: 1,
      },
    ],
    'local',
    'kw-node-2',
  );
  expect(columns).toBe(RATELIMIT_COLUMNS);
  expect(body.toString('utf8')).toBe('req_2\t5\tws_1\tns_1\tuser\\n42\t1\tlocal\tkw-node-2\n');
});
