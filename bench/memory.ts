/**
 * Memory of a node's key cache: RSS of this process once keyward's own Directory (from dist/)
 * holds N cached key records. Run with `node --expose-gc memory.js [N]`; prints one JSON line.
 *
 * What is measured: the real Directory / ReadThroughCache / LRU code with the node's default
 * cache configuration and heap tuning (`tuneHeapForKeyCache`, as `keyward serve` applies it), filled through `keyByHash` exactly as verifications fill it, with records
 * built by the real `keyFromHash` from hashes shaped like what HGETALL returns (every string a
 * fresh copy, as a Redis reply would give). Not measured: HTTP server, Redis clients, sockets.
 */
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

/** The parts of dist/ this script uses (declared here so that bench/ compiles without src/). */
interface CachedKey {
  id: string;
  hash: string;
}
interface Directory {
  keyByHash(ws: string, hash: string): Promise<CachedKey | undefined>;
  setListening(listening: boolean): void;
  keys: { size: number };
}
interface DirectoryModule {
  Directory: new (stores: unknown, options: CacheOptions) => Directory;
}
interface CacheOptions {
  maxEntries: number;
  ttlMs: number;
  negativeTtlMs: number;
}
interface RecordsModule {
  keyFromHash(hash: Record<string, string>): CachedKey | undefined;
}
interface HeapTuningModule {
  tuneHeapForKeyCache(): void;
}
interface ConfigModule {
  loadConfig(env: Record<string, string>): { cache: CacheOptions };
}

const root = resolve(process.env.KEYWARD_ROOT ?? process.cwd());
const load = createRequire(join(root, 'package.json'));
const { Directory } = load(join(root, 'dist/cache/directory.js')) as DirectoryModule;
const { keyFromHash } = load(join(root, 'dist/store/records.js')) as RecordsModule;
const { loadConfig } = load(join(root, 'dist/config.js')) as ConfigModule;
const { tuneHeapForKeyCache } = load(join(root, 'dist/cache/heapTuning.js')) as HeapTuningModule;
// What `keyward serve` does first: the cache is measured in the heap a node runs with.
tuneHeapForKeyCache();

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

function settle(): NodeJS.MemoryUsage {
  for (let i = 0; i < 4; i++) gc?.();
  return process.memoryUsage();
}

/** A fresh flat copy of a string, as each field of each Redis reply is its own string. */
const copy = (text: string) => Buffer.from(text, 'latin1').toString('latin1');

const BASE58 = Buffer.from('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 'latin1');

/** An id shaped like keyward's (`key_` and 22 base58 characters), as one flat string. */
function idLike(prefix: string, random: Uint8Array): string {
  const out = Buffer.allocUnsafe(prefix.length + 1 + 22);
  out.write(`${prefix}_`, 'latin1');
  for (let i = 0; i < 22; i++)
    out[prefix.length + 1 + i] = BASE58[(random[i] as number) % 58] as number;
  return out.toString('latin1');
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 1_000_000);
  const started = Date.now();
  const config = loadConfig({});
  const now = Date.now();
  const workspaceId = idLike('ws', randomBytes(22));
  const apiId = idLike('api', randomBytes(22));

  let pendingHash: Record<string, string> | undefined;
  const stores = {
    keys: { findByHash: async () => (pendingHash ? keyFromHash(pendingHash) : undefined) },
    apis: {
      get: async () => ({
        id: copy(apiId),
        workspaceId: copy(workspaceId),
        name: 'bench',
        createdAt: now,
      }),
    },
    rootKeys: { findByHash: async () => undefined },
  };
  const directory: Directory = new Directory(stores, config.cache);
  directory.setListening(true); // what the invalidation listener does once subscribed

  const before = settle();
  const batch = 10_000;
  for (let base = 0; base < count; base += batch) {
    const n = Math.min(batch, count - base);
    const random = randomBytes(54 * n);
    for (let i = 0; i < n; i++) {
      const digest = random.subarray(54 * i, 54 * i + 32);
      const seq = base + i;
      pendingHash = {
        id: idLike('key', random.subarray(54 * i + 32, 54 * i + 54)),
        workspaceId: copy(workspaceId),
        apiId: copy(apiId),
        hash: digest.toString('base64'),
        start: `bench_${copy(digest.toString('hex').slice(0, 4))}`,
        createdAt: String(now - (count - seq)),
        enabled: '1',
        version: '1',
        seq: String(seq),
        rlType: copy('fast'),
        rlLimit: '100',
        rlRefillRate: '10',
        rlRefillInterval: '1000',
      };
      // The lookup's own hash string, computed from the request, is separate from the record's.
      const found = await directory.keyByHash(workspaceId, digest.toString('base64'));
      if (!found) throw new Error('record not cached');
    }
  }
  pendingHash = undefined;
  const after = settle();
  const keys = directory.keys.size;
  const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
  process.stdout.write(
    `${JSON.stringify({
      records: count,
      cachedKeys: keys,
      node: process.version,
      cacheConfig: config.cache,
      baseline: { rssMiB: mib(before.rss), heapUsedMiB: mib(before.heapUsed) },
      filled: {
        rssMiB: mib(after.rss),
        heapUsedMiB: mib(after.heapUsed),
        heapTotalMiB: mib(after.heapTotal),
        externalMiB: mib(after.external),
        arrayBuffersMiB: mib(after.arrayBuffers),
      },
      bytesPerRecord: Math.round((after.rss - before.rss) / count),
      heapBytesPerRecord: Math.round((after.heapUsed - before.heapUsed) / count),
      seconds: (Date.now() - started) / 1000,
    })}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`memory: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
