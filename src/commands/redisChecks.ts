import type { Redis } from 'ioredis';
import { redisTimeMsExact } from '../redis/clock';
import { loadScripts } from '../redis/scripts';
import {
  LEGACY_APIS,
  LEGACY_IDENTITIES,
  LEGACY_KEYS,
  LEGACY_NAMESPACES,
  LEGACY_PERMISSIONS,
  LEGACY_ROLES,
  type LegacyKind,
} from '../store/legacyLayout';

export type CheckStatus = 'ok' | 'warn' | 'fail';

export interface CheckResult {
  /** Which Redis: `primary`, `local`, `analytics`, `cluster`, or `primary 10.0.0.5:6379` for a cluster master. */
  target: string;
  check: string;
  status: CheckStatus;
  detail: string;
}

/**
 * What a Redis holds decides what is checked: the records (the primary) and the usage counts (the
 * analytics Redis) are lost to a restart without AOF or to eviction; buckets are scripts' state.
 */
export type Holds = 'records' | 'buckets' | 'counts';

export interface ServerCheckOptions {
  target: string;
  holds: Holds;
  /** The nodes' command deadline (KEYWARD_REDIS_COMMAND_TIMEOUT_MS): latency is judged against it. */
  nodeCommandTimeoutMs: number;
}

/** Older servers are untested; 7.0 is what the test suite and the Dockerfile run. */
const MIN_MAJOR_VERSION = 7;
/** Beyond this, expiry checks (primary clock, seen from a node) and ids drift noticeably. */
const MAX_CLOCK_SKEW_MS = 1000;

export function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    if (line === '' || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

function milliseconds(startedNs: bigint): number {
  return Number(process.hrtime.bigint() - startedNs) / 1e6;
}

/** Runs one check; an error it throws is its failure, and the next check still runs. */
async function attempt(
  results: CheckResult[],
  target: string,
  check: string,
  run: () => Promise<{ status: CheckStatus; detail: string }>,
): Promise<void> {
  try {
    results.push({ target, check, ...(await run()) });
  } catch (error) {
    results.push({
      target,
      check,
      status: 'fail',
      detail: error instanceof Error ? error.message : String(error),
    });
  }
}

export async function checkLatency(
  redis: Redis,
  options: ServerCheckOptions,
): Promise<{ status: CheckStatus; detail: string }> {
  const started = process.hrtime.bigint();
  await redis.ping();
  const latency = milliseconds(started);
  const detail = `PING ${latency.toFixed(2)} ms`;
  // A node treats a reply later than its deadline as a Redis that is down.
  if (latency > options.nodeCommandTimeoutMs / 2) {
    return {
      status: 'warn',
      detail: `${detail}: over half of the nodes' command deadline (KEYWARD_REDIS_COMMAND_TIMEOUT_MS=${options.nodeCommandTimeoutMs})`,
    };
  }
  return { status: 'ok', detail };
}

function versionCheck(info: Map<string, string>): { status: CheckStatus; detail: string } {
  const version = info.get('redis_version');
  if (version === undefined)
    return { status: 'warn', detail: 'INFO server names no redis_version' };
  const major = Number(version.split('.')[0]);
  return major >= MIN_MAJOR_VERSION
    ? { status: 'ok', detail: `Redis ${version}` }
    : {
        status: 'warn',
        detail: `Redis ${version}: keyward is tested on ${MIN_MAJOR_VERSION}.0 and later`,
      };
}

/** What a restart or an eviction would lose, in the check's words. */
const LOST: Readonly<Record<Exclude<Holds, 'buckets'>, string>> = {
  records: 'every key, API and root key',
  counts: 'the usage counts',
};

function persistenceCheck(
  info: Map<string, string>,
  holds: Exclude<Holds, 'buckets'>,
): { status: CheckStatus; detail: string } {
  if (info.get('aof_enabled') !== '1') {
    return {
      status: 'warn',
      detail: `appendonly no: a restart loses ${LOST[holds]} written since the last snapshot; set appendonly yes`,
    };
  }
  const lastWrite = info.get('aof_last_write_status');
  if (lastWrite !== undefined && lastWrite !== 'ok') {
    return {
      status: 'fail',
      detail: `appendonly yes, but the last AOF write failed (${lastWrite})`,
    };
  }
  return { status: 'ok', detail: 'appendonly yes' };
}

function memoryCheck(
  info: Map<string, string>,
  holds: Exclude<Holds, 'buckets'>,
): { status: CheckStatus; detail: string } {
  const maxmemory = Number(info.get('maxmemory') ?? '0');
  const policy = info.get('maxmemory_policy') ?? 'noeviction';
  if (maxmemory === 0) return { status: 'ok', detail: 'no maxmemory: nothing is evicted' };
  if (policy === 'noeviction') {
    return { status: 'ok', detail: `maxmemory ${maxmemory} bytes, noeviction` };
  }
  // Evicting a record loses a key; evicting a consistent bucket hands out a full bucket again;
  // evicting a usage bucket loses its counts before their retention is over.
  const what = holds === 'records' ? 'keys and buckets' : 'usage counts';
  return {
    status: 'warn',
    detail: `maxmemory-policy ${policy}: Redis may evict ${what} when full; use noeviction`,
  };
}

async function scriptsCheck(redis: Redis): Promise<{ status: CheckStatus; detail: string }> {
  const scripts = loadScripts();
  for (const script of scripts) {
    try {
      await redis.script('LOAD', script.lua);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { status: 'fail', detail: `SCRIPT LOAD of ${script.command} failed: ${message}` };
    }
  }
  return { status: 'ok', detail: `${scripts.length} scripts load (SCRIPT LOAD)` };
}

async function clockCheck(redis: Redis): Promise<{ status: CheckStatus; detail: string }> {
  const before = Date.now();
  const reply = await redis.time();
  const after = Date.now();
  const redisMs = redisTimeMsExact(reply);
  // The reading was taken somewhere within the round trip: its middle is the best guess.
  const skew = redisMs - (before + after) / 2;
  const detail = `TIME is ${skew >= 0 ? '+' : ''}${skew.toFixed(0)} ms from this machine's clock (±${((after - before) / 2).toFixed(0)} ms)`;
  return Math.abs(skew) > MAX_CLOCK_SKEW_MS
    ? { status: 'warn', detail: `${detail}: over ${MAX_CLOCK_SKEW_MS} ms; check NTP on both` }
    : { status: 'ok', detail };
}

/** What `keyward migrate` moves, a kind at a time: each kind's marker, its records' pattern. */
const LEGACY_KINDS: readonly (LegacyKind & { what: string })[] = [
  { ...LEGACY_KEYS, what: 'keys' },
  { ...LEGACY_IDENTITIES, what: 'identities' },
  { ...LEGACY_NAMESPACES, what: 'namespaces' },
  { ...LEGACY_APIS, what: 'APIs' },
  { ...LEGACY_PERMISSIONS, what: 'permissions' },
  { ...LEGACY_ROLES, what: 'roles' },
];

/**
 * Whether records of the previous release's layout remain (docs/redis.md, "Upgrading the
 * layout"): nodes read them, at one more round trip for an unknown key, identity, namespace,
 * API, permission or role, until `keyward migrate` moves them.
 */
async function layoutCheck(redis: Redis): Promise<{ status: CheckStatus; detail: string }> {
  const done: string[] = [];
  for (const kind of LEGACY_KINDS) {
    // On a cluster master the marker may live in another master's slot (MOVED): look instead.
    if ((await redis.exists(kind.marker).catch(() => 0)) === 1) {
      done.push(`${kind.what} placed by their own ids (${kind.marker} is set)`);
      continue;
    }
    let cursor = '0';
    do {
      const [next, scanned] = await redis.scan(cursor, 'MATCH', kind.pattern, 'COUNT', 1000);
      const { record } = kind;
      const found = record ? scanned.filter((name) => record.test(name)) : scanned;
      if (found.length > 0) {
        return {
          status: 'warn',
          detail: `${kind.what} of the previous layout remain (${found[0]} …): run keyward migrate`,
        };
      }
      cursor = next;
    } while (cursor !== '0');
    done.push(`no ${kind.what} of the previous layout`);
  }
  return { status: 'ok', detail: done.join('; ') };
}

/**
 * Everything but reachability, on one connected server (a standalone Redis or one master of a
 * cluster). Each check stands alone: one that fails does not hide the others.
 */
export async function checkServer(
  redis: Redis,
  options: ServerCheckOptions,
): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const { target } = options;
  let info: Map<string, string> | undefined;
  await attempt(results, target, 'version', async () => {
    info = parseInfo(await redis.info());
    return versionCheck(info);
  });
  const { holds } = options;
  if (holds !== 'buckets' && info) {
    const fields = info;
    await attempt(results, target, 'persistence', async () => persistenceCheck(fields, holds));
    await attempt(results, target, 'memory', async () => memoryCheck(fields, holds));
  }
  // Usage counts are written with MULTI, never by a script.
  if (holds !== 'counts') await attempt(results, target, 'scripts', () => scriptsCheck(redis));
  if (holds === 'records') await attempt(results, target, 'layout', () => layoutCheck(redis));
  await attempt(results, target, 'clock', () => clockCheck(redis));
  return results;
}

/** CLUSTER INFO: every slot served, state ok. */
export function clusterStateCheck(
  clusterInfo: string,
  masters: number,
): { status: CheckStatus; detail: string } {
  const info = parseInfo(clusterInfo);
  const state = info.get('cluster_state') ?? 'unknown';
  const slots = info.get('cluster_slots_ok') ?? '?';
  const detail = `cluster_state:${state}, ${slots} of 16384 slots ok, ${masters} masters`;
  return { status: state === 'ok' && slots === '16384' ? 'ok' : 'fail', detail };
}
