import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { DeliveryAttempt, WebhookRecord } from '../domain/webhook';
import type { DeliveryJob, WebhookStore } from '../store/webhookStore';
import type { Vault } from '../vault/vault';
import { openSecret } from './secrets';
import { signatureHeader } from './signature';
import { guardedLookup, isPrivateAddress } from './targets';

export interface DispatcherOptions {
  /** How often a node looks for due deliveries (KEYWARD_WEBHOOK_POLL_MS). */
  pollMs: number;
  /** How long one attempt may take (KEYWARD_WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** The first retry's delay; each next one doubles, up to an hour (KEYWARD_WEBHOOK_RETRY_BASE_MS). */
  retryBaseMs: number;
  /** How long after its event a delivery is tried: 24 h. */
  retryForMs: number;
  /** KEYWARD_WEBHOOK_ALLOW_PRIVATE=1: private, loopback and link-local targets are let through. */
  allowPrivate: boolean;
  /** Deliveries under way at once on this node. */
  concurrency: number;
  userAgent: string;
  failed?: (error: unknown) => void;
  /** Told of each attempt's outcome. */
  attempted?: (outcome: DeliveryAttempt['outcome']) => void;
}

/** The longest pause between two attempts. */
export const MAX_RETRY_DELAY_MS = 3_600_000;

/** The delay before attempt `attempts + 1`, after `attempts` failed ones (1, 2, …). */
export function retryDelay(baseMs: number, attempts: number): number {
  return Math.min(baseMs * 2 ** Math.max(0, attempts - 1), MAX_RETRY_DELAY_MS);
}

interface Outcome {
  status?: number;
  error?: string;
  /** The target may never be reached (a private address): no retry helps. */
  refused?: boolean;
}

/**
 * Delivers queued events on every node: claims what is due (with a lease, so one node delivers
 * it at a time and a node that dies leaves it due again), POSTs it signed, records the attempt,
 * and either finishes it or makes it due again after a backoff. Nothing here runs on a request's
 * path: a slow or dead receiver holds only this node's delivery slots.
 */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private readonly inFlight = new Set<AbortController>();
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly store: WebhookStore,
    private readonly vault: Vault | undefined,
    private readonly now: () => number,
    private readonly options: DispatcherOptions,
  ) {}

  /** How long a claimed delivery is left to its node before another may take it. */
  get leaseMs(): number {
    return this.options.timeoutMs + 2_000;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.poll(), this.options.pollMs);
    this.timer.unref();
  }

  /** Stops claiming, cuts attempts under way (their events stay queued) and waits for them. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const controller of this.inFlight) controller.abort();
    await Promise.allSettled([...this.running]);
  }

  /** One look for due deliveries; they run in the background. */
  async poll(): Promise<void> {
    if (this.polling || this.timer === undefined) return;
    const room = this.options.concurrency - this.running.size;
    if (room <= 0) return;
    this.polling = true;
    try {
      // The node's clock is the Redis clock: a delivery due by it is due by the script's TIME.
      if (!(await this.store.anyDue(this.now()))) return;
      const jobs = await this.store.claim(this.leaseMs, room);
      for (const job of jobs) {
        const run = this.deliver(job)
          .catch((error: unknown) => this.options.failed?.(error))
          .finally(() => this.running.delete(run));
        this.running.add(run);
      }
    } catch (error) {
      this.options.failed?.(error);
    } finally {
      this.polling = false;
    }
  }

  private async deliver(job: DeliveryJob): Promise<void> {
    const hook = await this.store.get(job.workspaceId, job.webhookId);
    if (!hook) return this.store.finish(job.eventId); // deleted: its events go with it
    const at = this.now();
    const started = process.hrtime.bigint();
    const outcome = await this.attempt(hook, job);
    if (outcome.error === 'aborted') return; // the node is stopping: left to its lease
    const attempts = job.attempts + 1;
    const delivered = outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300;
    const nextAt = this.now() + retryDelay(this.options.retryBaseMs, attempts);
    const abandoned =
      !delivered && (outcome.refused === true || nextAt - job.queuedAt > this.options.retryForMs);
    const record: DeliveryAttempt = {
      eventId: job.eventId,
      type: job.type,
      attempt: attempts,
      at,
      ...(outcome.status !== undefined ? { status: outcome.status } : {}),
      outcome: delivered ? 'delivered' : abandoned ? 'abandoned' : 'failed',
      ...(outcome.error !== undefined ? { error: outcome.error } : {}),
      durationMs: Math.round(Number(process.hrtime.bigint() - started) / 1e6),
    };
    this.options.attempted?.(record.outcome);
    await this.store.recordAttempt(job.workspaceId, job.webhookId, record);
    if (delivered || abandoned) return this.store.finish(job.eventId);
    return this.store.retry({ ...job, attempts }, nextAt);
  }

  /** One POST: its status, or why none came. Redirects are answers, never followed. */
  private attempt(hook: WebhookRecord, job: DeliveryJob): Promise<Outcome> {
    let secret: string;
    try {
      secret = openSecret(this.vault, hook);
    } catch (error) {
      return Promise.resolve({ error: (error as Error).message });
    }
    const url = new URL(hook.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!this.options.allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) {
      return Promise.resolve({ error: 'target refused: private address', refused: true });
    }
    const body = Buffer.from(job.body);
    const controller = new AbortController();
    this.inFlight.add(controller);
    return new Promise<Outcome>((resolve) => {
      let settled = false;
      const settle = (outcome: Outcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.inFlight.delete(controller);
        resolve(outcome);
      };
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(
        url,
        {
          method: 'POST',
          signal: controller.signal,
          lookup: guardedLookup(this.options.allowPrivate) as never,
          headers: {
            'content-type': 'application/json',
            'content-length': String(body.length),
            'user-agent': this.options.userAgent,
            'keyward-event-id': job.eventId,
            'keyward-signature': signatureHeader(secret, job.body, Math.floor(Date.now() / 1000)),
          },
        },
        (res: IncomingMessage) => {
          // The answer's status is all that counts; its body is read and dropped.
          res.resume();
          res.on('end', () => settle({ status: res.statusCode ?? 0 }));
          res.on('error', () => settle({ status: res.statusCode ?? 0 }));
        },
      );
      const timer = setTimeout(() => {
        settle({ error: `timed out after ${this.options.timeoutMs} ms` });
        req.destroy();
      }, this.options.timeoutMs);
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (controller.signal.aborted) return settle({ error: 'aborted' });
        if (error.code === 'EKEYWARDREFUSED') {
          return settle({ error: 'target refused: private address', refused: true });
        }
        settle({ error: error.code ?? 'request failed' });
      });
      req.end(body);
    });
  }
}
