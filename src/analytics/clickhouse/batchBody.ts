import type { HeldRatelimit, HeldVerification, SinkTable } from './sink';
import { TabSeparatedWriter } from './tabSeparated';

/** A batch as the sink sends it: the INSERT's column list and its rows in TabSeparated. */
export interface BatchBody {
  columns: readonly string[];
  body: Buffer;
}

/** The columns each row writes, in order (schema.ts; the table's other columns default). */
export const VERIFICATION_COLUMNS = [
  'request_id',
  'time',
  'workspace_id',
  'key_space_id',
  'identity_id',
  'external_id',
  'key_id',
  'outcome',
  'tags',
  'spent_credits',
  'client_ip',
  'region',
  'batch_id',
] as const;

export const RATELIMIT_COLUMNS = [
  'request_id',
  'time',
  'workspace_id',
  'namespace_id',
  'identifier',
  'passed',
  'region',
  'batch_id',
] as const;

/** Bytes a row takes, about: the buffer is sized once for most batches. */
const ROW_BYTES_HINT = 256;

/**
 * A batch's rows as the body of its INSERT. `region` and `batchId`, the same for every row, end
 * each row: escaped once per batch, not once per row.
 */
export function batchBody(
  table: SinkTable,
  rows: readonly (HeldVerification | HeldRatelimit)[],
  region: string,
  batchId: string,
): BatchBody {
  const writer = new TabSeparatedWriter(rows.length * ROW_BYTES_HINT);
  const tail = new TabSeparatedWriter(64)
    .tab()
    .string(region)
    .tab()
    .string(batchId)
    .endRow()
    .finish();
  if (table === 'key_verifications_v1') {
    for (const row of rows as readonly HeldVerification[]) verification(writer, row).bytes(tail);
    return { columns: VERIFICATION_COLUMNS, body: writer.finish() };
  }
  for (const row of rows as readonly HeldRatelimit[]) ratelimit(writer, row).bytes(tail);
  return { columns: RATELIMIT_COLUMNS, body: writer.finish() };
}

/** A verification's columns up to client_ip (region and batch_id follow). */
function verification(writer: TabSeparatedWriter, row: HeldVerification): TabSeparatedWriter {
  return writer
    .string(row.request_id)
    .tab()
    .integer(row.time)
    .tab()
    .string(row.workspace_id)
    .tab()
    .string(row.key_space_id)
    .tab()
    .string(row.identity_id)
    .tab()
    .string(row.external_id)
    .tab()
    .string(row.key_id)
    .tab()
    .string(row.outcome)
    .tab()
    .strings(row.tags)
    .tab()
    .integer(row.spent_credits)
    .tab()
    .string(row.client_ip ?? '');
}

/** A standalone limit's columns up to passed (region and batch_id follow). */
function ratelimit(writer: TabSeparatedWriter, row: HeldRatelimit): TabSeparatedWriter {
  return writer
    .string(row.request_id)
    .tab()
    .integer(row.time)
    .tab()
    .string(row.workspace_id)
    .tab()
    .string(row.namespace_id)
    .tab()
    .string(row.identifier)
    .tab()
    .integer(row.passed);
}
