/**
 * The load side of the benchmark, run in the driver process (never in a server's process):
 * autocannon at a fixed concurrency for throughput, and a sequential keep-alive client with
 * hrtime stamps for the added latency of a rate-limit check.
 */
import { Agent, request } from 'node:http';
import autocannon from 'autocannon';

export interface LoadTarget {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** A POST of `body` to `path` of a node (`/v1/keys.verifyKey`, `/v2/…`) under a root key. */
export function rpcTarget(
  baseUrl: string,
  path: string,
  rootKey: string,
  body: object,
): LoadTarget {
  return {
    url: `${baseUrl}${path}`,
    headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
}

export interface LoadResult {
  requestsPerSecond: number;
  responses: number;
  seconds: number;
  /** Latency percentiles in ms, from every response's own timing (autocannon's are whole ms). */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
}

/** A growable list of float samples with exact percentiles. */
class Samples {
  private data = new Float64Array(1 << 18);
  length = 0;

  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }

  sorted(): Float64Array {
    return this.data.slice(0, this.length).sort();
  }
}

export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

interface Slice {
  responses: number;
  seconds: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
}

/** One bounded autocannon run; every response's latency goes into `samples` when given. */
function run(
  target: LoadTarget,
  connections: number,
  seconds: number,
  samples?: Samples,
  /** Requests per second over all connections (autocannon's overallRate); none: as fast as answered. */
  rate?: number,
): Promise<Slice> {
  return new Promise((resolve, reject) => {
    let responses = 0;
    const started = process.hrtime.bigint();
    const instance = autocannon(
      {
        url: target.url,
        method: 'POST',
        headers: target.headers,
        body: target.body,
        connections,
        pipelining: 1,
        ...(rate ? { overallRate: rate } : {}),
        duration: seconds,
        timeout: 10,
      },
      (error: unknown, result: autocannon.Result) => {
        const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
        if (error) return reject(error instanceof Error ? error : new Error(String(error)));
        const statusCodes: Record<string, number> = {};
        for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) {
          statusCodes[code] = stats.count ?? 0;
        }
        resolve({
          responses,
          seconds: elapsed,
          errors: result.errors,
          timeouts: result.timeouts,
          non2xx: result.non2xx,
          statusCodes,
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      responses++;
      samples?.push(responseTime);
    });
  });
}

/** Discarded load, to warm a server (JIT, caches, connections) before it is measured. */
export async function warmUp(target: LoadTarget, connections: number, seconds: number) {
  if (seconds > 0) await run(target, connections, seconds);
}

/**
 * The measured load of one case, accumulated over slices: cases are measured in turn, slice by
 * slice, so that whatever else the machine does while they run falls on all of them alike.
 */
export class Measurement {
  private readonly samples = new Samples();
  private readonly total: Slice = {
    responses: 0,
    seconds: 0,
    errors: 0,
    timeouts: 0,
    non2xx: 0,
    statusCodes: {},
  };
  slices = 0;

  constructor(
    readonly target: LoadTarget,
    private readonly connections: number,
    /** A fixed offered load in requests per second; none: closed loop, as fast as answered. */
    private readonly rate?: number,
  ) {}

  async slice(seconds: number): Promise<{ responses: number; seconds: number }> {
    const slice = await run(this.target, this.connections, seconds, this.samples, this.rate);
    this.slices++;
    this.total.responses += slice.responses;
    this.total.seconds += slice.seconds;
    this.total.errors += slice.errors;
    this.total.timeouts += slice.timeouts;
    this.total.non2xx += slice.non2xx;
    for (const [code, count] of Object.entries(slice.statusCodes)) {
      this.total.statusCodes[code] = (this.total.statusCodes[code] ?? 0) + count;
    }
    return { responses: slice.responses, seconds: slice.seconds };
  }

  result(): LoadResult {
    const sorted = this.samples.sorted();
    const t = this.total;
    return {
      requestsPerSecond: t.responses / Math.max(1e-9, t.seconds),
      responses: t.responses,
      seconds: t.seconds,
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: sorted.length > 0 ? (sorted[sorted.length - 1] as number) : NaN,
      errors: t.errors,
      timeouts: t.timeouts,
      non2xx: t.non2xx,
      statusCodes: t.statusCodes,
    };
  }
}

export interface SequentialResult {
  name: string;
  requests: number;
  p50us: number;
  p90us: number;
  p99us: number;
  meanUs: number;
  failures: number;
}

/**
 * One keep-alive connection, one request at a time, for each target in turn in short alternating
 * blocks (so drift of the machine affects every target alike) until `seconds` have passed.
 */
export async function sequential(
  targets: { name: string; target: LoadTarget; check: (body: string) => boolean }[],
  options: { seconds: number; warmupRequests: number; block: number },
): Promise<SequentialResult[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const once = (target: LoadTarget): Promise<{ ns: number; ok: boolean; body: string }> =>
    new Promise((resolve, reject) => {
      const url = new URL(target.url);
      const started = process.hrtime.bigint();
      const req = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { ...target.headers, 'content-length': Buffer.byteLength(target.body) },
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () =>
            resolve({
              ns: Number(process.hrtime.bigint() - started),
              ok: res.statusCode === 200,
              body,
            }),
          );
          res.on('error', reject);
        },
      );
      req.setTimeout(5000, () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end(target.body);
    });

  try {
    for (const { target } of targets) {
      for (let i = 0; i < options.warmupRequests; i++) await once(target);
    }
    const all = targets.map(() => new Samples());
    const failures = targets.map(() => 0);
    const deadline = process.hrtime.bigint() + BigInt(Math.round(options.seconds * 1e9));
    while (process.hrtime.bigint() < deadline) {
      for (let t = 0; t < targets.length; t++) {
        const entry = targets[t] as (typeof targets)[number];
        for (let i = 0; i < options.block; i++) {
          const { ns, ok, body } = await once(entry.target);
          (all[t] as Samples).push(ns / 1000);
          if (!ok || !entry.check(body)) failures[t] = (failures[t] as number) + 1;
        }
      }
    }
    return targets.map(({ name }, t) => {
      const samples = all[t] as Samples;
      const sorted = samples.sorted();
      let sum = 0;
      for (const v of sorted) sum += v;
      return {
        name,
        requests: samples.length,
        p50us: percentile(sorted, 50),
        p90us: percentile(sorted, 90),
        p99us: percentile(sorted, 99),
        meanUs: sum / Math.max(1, sorted.length),
        failures: failures[t] as number,
      };
    });
  } finally {
    agent.destroy();
  }
}
