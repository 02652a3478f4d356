import { PeriodicFlush } from './periodicFlush';
import {
  bucketStart,
  CREDITS,
  limitField,
  NO_API,
  normalTags,
  verificationField,
} from '../domain/usage';
import {
  partTag,
  usagePart,
  type UsageIncrement,
  type UsagePart,
  type UsageStore,
} from '../store/usageStore';

/** What a node counts of one verification, once its verdict is known. */
export interface CountedVerification {
  /** The key's API, or the one the request named, or none. */
  apiId: string | undefined;
  keyId: string | undefined;
  identityId: string | undefined;
  code: string;
  tags: readonly string[] | undefined;
  /** Credits this verification spent (0 for none). */
  credits: number;
  /** The request's id, for the ClickHouse row (`request_id`). */
  requestId?: string;
  /** The client's address (KEYWARD_LOG_CLIENT_IP), for the ClickHouse row (`client_ip`). */
  clientIp?: string | undefined;
}

/**
 * Where else a node's verifications and standalone limits go, row by row, beside the counts
 * (the ClickHouse sink, src/analytics/clickhouse). Called on the request's path: it must only
 * take the row into memory.
 */
export interface UsageSink {
  verification(ws: string, at: number, v: CountedVerification): void;
  limit(
    ws: string,
    at: number,
    namespaceId: string,
    identifier: string,
    passed: boolean,
    requestId?: string,
  ): void;
  start(): void;
  /** Writes what it holds within `deadlineMs`; resolves with the rows it could not. */
  stop(deadlineMs: number): Promise<number>;
}

export interface UsageOptions {
  /** false (KEYWARD_ANALYTICS=off): nothing is counted. */
  enabled: boolean;
  /** Flush period; at most a second. */
  flushMs: number;
  /** Distinct counters held in memory, pending or unsure, before new ones are dropped. */
  maxPending: number;
  /** This process's name in its flush markers. */
  nodeId: string;
  /** Called with each count dropped for want of room (keyward_analytics_dropped_total). */
  dropped?: (kind: 'verification' | 'credits' | 'limit', count: number) => void;
  /** Called after each flush attempt that had something to write. */
  flushed?: (ok: boolean) => void;
  /** Rows to ClickHouse (KEYWARD_CLICKHOUSE_URL), whether or not counts are kept (`enabled`). */
  sink?: UsageSink;
}

interface Pending extends UsageIncrement {
  part: UsagePart;
  kind: 'verification' | 'credits' | 'limit';
}

/** A part of a flush whose answer never came: it landed or not, its marker will tell. */
interface Unsure {
  part: UsagePart;
  seq: number;
  entries: Pending[];
}

/**
 * Usage analytics of one node: counts in memory on the request's path (a Map lookup, no I/O),
 * flushed on a timer in one MULTI per part (an API's or namespace's shard, one slot). A part
 * that fails leaves its counts unsure until the node's marker in that part says whether they
 * landed: they are merged back if not, so a Redis that is away delays counts and neither loses
 * nor doubles them. Memory is bounded by `maxPending` distinct counters; what does not fit is
 * dropped and counted.
 */
export class UsageRecorder {
  private pending = new Map<string, Pending>();
  private readonly unsure = new Map<string, Unsure>();
  private unsureCount = 0;
  private seq = 0;
  private readonly flusher: PeriodicFlush;

  constructor(
    private readonly store: UsageStore,
    private readonly options: UsageOptions,
  ) {
    this.flusher = new PeriodicFlush(() => this.flushOnce(), options.flushMs);
  }

  /** Distinct counters waiting in memory (pending or unsure). */
  get held(): number {
    return this.pending.size + this.unsureCount;
  }

  verification(ws: string, at: number, v: CountedVerification): void {
    this.options.sink?.verification(ws, at, v);
    if (!this.options.enabled) return;
    const minute = bucketStart('minute', at);
    const apiId = v.apiId ?? NO_API;
    const keyId = v.keyId ?? '';
    const identityId = v.identityId ?? '';
    const tags = normalTags(v.tags);
    const base = `${ws} ${apiId} ${minute} ${keyId} ${identityId}`;
    const suffix = tags.length === 0 ? '' : ` ${JSON.stringify(tags)}`;
    const counter = { keyId, identityId, tags };
    // The part (a CRC-32 of the key id) only when a counter is new: most calls find theirs.
    this.add(`${base} ${v.code}${suffix}`, 1, () => ({
      part: usagePart(ws, 'v', apiId, keyId),
      kind: 'verification',
      minute,
      field: verificationField({ ...counter, outcome: v.code }),
      count: 0,
    }));
    if (v.credits > 0) {
      this.add(`${base} ${CREDITS}${suffix}`, v.credits, () => ({
        part: usagePart(ws, 'v', apiId, keyId),
        kind: 'credits',
        minute,
        field: verificationField({ ...counter, outcome: CREDITS }),
        count: 0,
      }));
    }
  }

  limit(
    ws: string,
    at: number,
    namespaceId: string,
    identifier: string,
    passed: boolean,
    /** The request's id, for the ClickHouse row; see CountedVerification.requestId. */
    requestId?: string,
  ): void {
    this.options.sink?.limit(ws, at, namespaceId, identifier, passed, requestId);
    if (!this.options.enabled) return;
    const minute = bucketStart('minute', at);
    this.add(`${ws} rl ${namespaceId} ${minute} ${passed ? 1 : 0} ${identifier}`, 1, () => ({
      part: usagePart(ws, 'rl', namespaceId, identifier),
      kind: 'limit',
      minute,
      field: limitField(identifier, passed),
      count: 0,
    }));
  }

  private add(id: string, count: number, create: () => Pending): void {
    let entry = this.pending.get(id);
    if (!entry) {
      if (this.held >= this.options.maxPending) {
        const kind = create().kind;
        this.options.dropped?.(kind, count);
        return;
      }
      entry = create();
      this.pending.set(id, entry);
    }
    entry.count += count;
  }

  start(): void {
    this.options.sink?.start();
    if (!this.options.enabled) return;
    this.flusher.start();
  }

  /**
   * One flush: settles what an earlier one left unsure, then writes what is pending. true when
   * nothing is left in memory. Never runs twice at once (a second call joins the first).
   */
  flush(): Promise<boolean> {
    return this.flusher.run();
  }

  /**
   * Stops the timer and flushes until nothing is left or `deadlineMs` has passed (SIGTERM: the
   * node has answered its last request). Returns the counters it could not write (and the
   * sink's rows, which it stops alongside).
   */
  async stop(deadlineMs: number): Promise<number> {
    const sink = this.options.sink?.stop(deadlineMs) ?? Promise.resolve(0);
    return (await this.stopCounting(deadlineMs)) + (await sink);
  }

  private async stopCounting(deadlineMs: number): Promise<number> {
    this.flusher.stop();
    const until = Date.now() + deadlineMs;
    while (this.held > 0 || this.flusher.busy) {
      if (await this.flush()) break;
      if (Date.now() >= until) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return this.held;
  }

  private async flushOnce(): Promise<boolean> {
    // Each unsure part is settled by its own marker: one that landed is never written again,
    // one that did not goes back to pending, one whose marker cannot be read yet stays unsure.
    const checks = await Promise.all(
      [...this.unsure].map(async ([tag, unsure]) => {
        try {
          return {
            tag,
            unsure,
            landed: await this.store.landed(unsure.part, this.options.nodeId, unsure.seq),
          };
        } catch {
          return { tag, unsure, landed: undefined };
        }
      }),
    );
    let settled = true;
    for (const { tag, unsure, landed } of checks) {
      if (landed === undefined) {
        settled = false;
        continue;
      }
      this.unsure.delete(tag);
      this.unsureCount -= unsure.entries.length;
      if (!landed) for (const entry of unsure.entries) this.mergeBack(entry);
    }
    // A write now could set the marker of a part still unsure before anyone read it.
    if (!settled) return false;
    if (this.pending.size === 0) return true;
    const batch = this.pending;
    this.pending = new Map();
    const seq = ++this.seq;
    const byPart = new Map<string, Pending[]>();
    for (const entry of batch.values()) {
      const tag = partTag(entry.part);
      let list = byPart.get(tag);
      if (!list) byPart.set(tag, (list = []));
      list.push(entry);
    }
    let ok = true;
    await Promise.all(
      [...byPart].map(async ([tag, entries]) => {
        const part = entries[0]!.part;
        try {
          await this.store.write(part, entries, this.options.nodeId, seq);
        } catch {
          ok = false;
          this.unsure.set(tag, { part, seq, entries });
          this.unsureCount += entries.length;
        }
      }),
    );
    this.options.flushed?.(ok);
    return ok && this.pending.size === 0;
  }

  /** A count whose flush did not land goes back to pending, beside what came since. */
  private mergeBack(entry: Pending): void {
    const id = `${partTag(entry.part)} ${entry.minute} ${entry.field}`;
    this.add(id, entry.count, () => ({ ...entry, count: 0 }));
  }
}
