import type { ChainableCommander } from 'ioredis';
import { DEFAULT_AUDIT_MAX_ENTRIES, type AuditEntry } from '../domain/audit';
import { newId } from '../keys/ids';
import type { RedisClient as Redis } from '../redis/clients';
import { resultDecoder } from '../redis/scriptTable';
import { auditFields, auditShard, auditShardCap } from './auditLog';
import { names } from './names';

/**
 * The audit outbox (docs/decisions.md, "Audit log"): a write in a slot other than its workspace's
 * (a key's credits, a root key's record) cannot append to the workspace's stream in its own step
 * on a cluster. So it takes three steps:
 *   1. register: the outbox's name goes into a registry that the sweep reads (a name there whose
 *      outbox is empty costs one XRANGE a sweep, nothing more);
 *   2. the write's own script or MULTI appends the entry to the outbox under the write's tag;
 *   3. relay: each entry goes to one of its workspace's 16 audit shards (by its target), at most
 *      once (a marker per entry in the shard's slot, set in the same step as the append), and is
 *      then deleted from the outbox.
 * A node that dies after step 2 leaves the entry in the outbox; the next write to the same outbox,
 * or a node's sweep (src/store/auditSweeper.ts), relays it.
 */

/** An outbox expires a week after its last entry: empty by then unless no node ran all week. */
export const OUTBOX_TTL_MS = 7 * 24 * 3_600_000;
/**
 * A relayed entry's marker lives ten minutes: the entry is deleted from its outbox one round trip
 * after its relay, or by the next sweep or repair (seconds) when its node died in between; only a
 * relay that read the entry before then could append it again. Every key write relays one, so a
 * day's markers would weigh on the workspace's slot (an import of 100,000 keys: 100,000 markers).
 */
const MARKER_TTL_MS = 10 * 60_000;
const RELAY_BATCH = 100;

const relayOutcome = resultDecoder('relayAudit');
const forgetOutcome = resultDecoder('forgetAuditOutbox');

/**
 * The fields of an outbox entry: its workspace, a token that names it for the relay's marker,
 * then the audit entry's own. The entry's id is the time of the write, on the Redis clock.
 */
export function outboxFields(ws: string, entry: AuditEntry): string[] {
  return ['workspaceId', ws, 'token', newId('aud'), ...auditFields(entry)];
}

/** The outbox argument of a write script (lua/includes/outbox.lua). */
export function outboxArgument(ws: string, entry: AuditEntry): string {
  return outboxArgumentOf(outboxFields(ws, entry));
}

/** The same, of an entry's fields as outboxFields made them. */
export function outboxArgumentOf(fields: readonly string[]): string {
  return JSON.stringify({ ttl: String(OUTBOX_TTL_MS), fields });
}

/** The same entry appended inside a MULTI, for the writes that are not scripts. */
export function appendToOutbox(
  multi: ChainableCommander,
  outbox: string,
  ws: string,
  entry: AuditEntry,
): ChainableCommander {
  return multi.xadd(outbox, '*', ...outboxFields(ws, entry)).pexpire(outbox, OUTBOX_TTL_MS);
}

/** The workspace stream's fields of an outbox entry, and where they go; undefined if not ours. */
function relayed(
  id: string,
  values: readonly string[],
): { ws: string; token: string; targetId: string; fields: string[] } | undefined {
  let ws: string | undefined;
  let token: string | undefined;
  let targetId = '';
  const fields: string[] = [];
  for (let i = 0; i + 1 < values.length; i += 2) {
    const [field, value] = [values[i] as string, values[i + 1] as string];
    if (field === 'workspaceId') ws = value;
    else if (field === 'token') token = value;
    else {
      if (field === 'targetId') targetId = value;
      fields.push(field, value);
    }
  }
  if (ws === undefined || token === undefined || fields.length === 0) return undefined;
  // The stream entry's id is the relay's time; the write's own goes with it.
  fields.push('time', id.split('-')[0] as string);
  return { ws, token, targetId, fields };
}

export class AuditOutbox {
  constructor(
    private readonly redis: Redis,
    /** The cap of a workspace's log: each of its shards keeps a sixteenth (auditShardCap). */
    private readonly maxEntries: number = DEFAULT_AUDIT_MAX_ENTRIES,
  ) {}

  /** Step 1, before the write that may append to `outbox`: every registration adds 1 to its score. */
  async register(outbox: string): Promise<void> {
    await this.redis.zincrby(names.auditOutboxes, 1, outbox);
  }

  /**
   * Step 3, right after the write. A failure is left to the sweep: the write happened, and
   * answering it with an error would invite a retry that makes it twice.
   */
  async relayAfterWrite(outbox: string): Promise<void> {
    try {
      await this.relay(outbox);
    } catch {
      // The entry waits in the outbox for the next write there or the next sweep.
    }
  }

  /** Relays every entry of the outbox, oldest first; answers how many it found there. */
  async relay(outbox: string): Promise<number> {
    let found = 0;
    for (;;) {
      const entries = await this.redis.xrange(outbox, '-', '+', 'COUNT', RELAY_BATCH);
      for (const [id, values] of entries) {
        await this.relayEntry(id, values);
        await this.redis.takeOutboxEntryV1(outbox, id);
      }
      found += entries.length;
      if (entries.length < RELAY_BATCH) return found;
    }
  }

  /**
   * Relays one entry whose id and fields the write already knows (its script answered the id),
   * then takes it from the outbox: the relay of a fresh outbox without reading it first.
   */
  async relayKnown(outbox: string, id: string, fields: readonly string[]): Promise<void> {
    await this.relayEntry(id, fields);
    await this.redis.takeOutboxEntryV1(outbox, id);
  }

  /**
   * Appends one outbox entry to its workspace's stream unless it was relayed before; true when
   * it appended. An entry that is not an outbox entry of ours could never be relayed and is
   * answered false (the caller deletes it rather than retrying it forever).
   */
  async relayEntry(id: string, values: readonly string[]): Promise<boolean> {
    const entry = relayed(id, values);
    if (!entry) return false;
    const shard = auditShard(entry.targetId);
    const argument = JSON.stringify({
      max: String(auditShardCap(this.maxEntries)),
      fields: entry.fields,
    });
    const result = await this.redis.relayAuditV1(
      names.auditShard(entry.ws, shard),
      names.auditRelayed(entry.ws, shard, entry.token),
      MARKER_TTL_MS,
      argument,
    );
    return relayOutcome(result) === 'appended';
  }

  /** The registry, a page at a time: each outbox's name and its score (its registrations). */
  async *registered(): AsyncGenerator<[outbox: string, score: string][]> {
    let cursor = '0';
    do {
      const [next, flat] = await this.redis.zscan(names.auditOutboxes, cursor, 'COUNT', 200);
      const page: [string, string][] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        page.push([flat[i] as string, flat[i + 1] as string]);
      }
      yield page;
      cursor = next;
    } while (cursor !== '0');
  }

  /** Takes an outbox out of the registry, unless it was registered again since `score`. */
  async forget(outbox: string, score: string): Promise<boolean> {
    return (
      forgetOutcome(await this.redis.forgetAuditOutboxV1(names.auditOutboxes, outbox, score)) ===
      'removed'
    );
  }
}
