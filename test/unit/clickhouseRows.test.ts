import { ClickHouseUsageSink } from '../../src/analytics/clickhouse/usageRows';
import type { ClickHouseSink } from '../../src/analytics/clickhouse/sink';
import { UsageRecorder } from '../../src/observability/usage';
import type { UsageStore } from '../../src/store/usageStore';

/** What UsageRecorder hands the ClickHouse sink, as rows (the sink itself: clickhouseSink.test). */
function capture() {
  const rows: { kind: string; row: Record<string, unknown> }[] = [];
  const sink = {
    verification: (row: Record<string, unknown>) => rows.push({ kind: 'verification', row }),
    limit: (row: Record<string, unknown>) => rows.push({ kind: 'limit', row }),
  } as unknown as ClickHouseSink;
  // Redis counting off: the rows go to ClickHouse whatever KEYWARD_ANALYTICS says.
  const recorder = new UsageRecorder({} as UsageStore, {
    enabled: false,
    flushMs: 1000,
    maxPending: 10,
    nodeId: 'test',
    sink: new ClickHouseUsageSink(sink),
  });
  return { rows, recorder };
}

test('a verification becomes a row of key_verifications_v1, its tags as the counts keep them', () => {
  const { rows, recorder } = capture();
  recorder.verification('ws_1', 1_764_230_000_000, {
    apiId: 'api_1',
    keyId: 'key_1',
    identityId: 'id_1',
    code: 'RATE_LIMITED',
    tags: ['b', 'a', 'b'],
    credits: 3,
    requestId: 'req_1',
  });
  recorder.verification('ws_1', 1_764_230_000_001, {
    apiId: undefined,
    keyId: undefined,
    identityId: undefined,
    code: 'NOT_FOUND',
    tags: undefined,
    credits: 0,
  });
  expect(rows).toEqual([
    {
      kind: 'verification',
      row: {
        request_id: 'req_1',
        time: 1_764_230_000_000,
        workspace_id: 'ws_1',
        key_space_id: 'api_1',
        identity_id: 'id_1',
        external_id: '',
        key_id: 'key_1',
        outcome: 'RATE_LIMITED',
        tags: ['a', 'b'],
        spent_credits: 3,
      },
    },
    {
      kind: 'verification',
      row: expect.objectContaining({ request_id: '', key_space_id: '', key_id: '', tags: [] }),
    },
  ]);
});

test('a standalone limit becomes a row of ratelimits_v1', () => {
  const { rows, recorder } = capture();
  recorder.limit('ws_1', 5, 'rlns_1', 'ursula', false, 'req_2');
  recorder.limit('ws_1', 6, 'rlns_1', 'ursula', true);
  expect(rows.map(({ row }) => row)).toEqual([
    {
      request_id: 'req_2',
      time: 5,
      workspace_id: 'ws_1',
      namespace_id: 'rlns_1',
      identifier: 'ursula',
      passed: 0,
    },
    expect.objectContaining({ request_id: '', passed: 1 }),
  ]);
});
