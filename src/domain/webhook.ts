/**
 * Usage webhooks (docs/webhooks.md): a workspace's HTTP endpoints told of its keys' credits
 * running low or out, of rate-limit refusals and of keys about to expire.
 */

export const WEBHOOK_EVENTS = [
  'key.credits.low',
  'key.credits.exhausted',
  'key.ratelimited',
  'key.expiring',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** A webhook as stored (its secret sealed, or plain without a vault: docs/decisions.md). */
export interface WebhookRecord {
  id: string;
  workspaceId: string;
  url: string;
  events: readonly WebhookEventType[];
  /** key.credits.low fires when a key's credits fall to or below this; default 0 (never below). */
  creditsThreshold?: number;
  createdAt: number;
  /** `v1.…` when sealed by the vault, `plain.<secret>` otherwise. */
  secret: string;
}

/** What one event says: the body a receiver gets, byte for byte the same on every attempt. */
export interface WebhookEvent {
  /** `evt_…`: the same on every attempt and from every node, so a receiver can drop repeats. */
  id: string;
  type: WebhookEventType;
  /** Unix ms when the event was noticed. */
  createdAt: number;
  data: {
    workspaceId: string;
    apiId?: string;
    keyId: string;
    identity?: { id: string; externalId: string };
    [field: string]: unknown;
  };
}

/** How long before `expires` key.expiring fires. */
export const EXPIRING_WITHIN_MS = 24 * 3_600_000;

/** Whether a key that expires at `expires` is within its last EXPIRING_WITHIN_MS at `now`. */
export function expiringSoon(expires: number, now: number): boolean {
  return expires > now && expires - now <= EXPIRING_WITHIN_MS;
}

/** The most webhooks one workspace may have: each verification event fans out to each. */
export const MAX_WEBHOOKS_PER_WORKSPACE = 100;

/** How many attempts listDeliveries keeps per webhook, newest first. */
export const DELIVERIES_KEPT = 100;

/** One attempt at delivering an event, as listDeliveries answers it. */
export interface DeliveryAttempt {
  eventId: string;
  type: WebhookEventType;
  /** 1 for the first attempt. */
  attempt: number;
  /** Unix ms the attempt began. */
  at: number;
  /** The receiver's HTTP status; absent when none came (refused, timed out, unreachable). */
  status?: number;
  /** `delivered`, `failed` (retried later) or `abandoned` (24 h passed, or the target refused). */
  outcome: 'delivered' | 'failed' | 'abandoned';
  /** Why it failed, in a few words; never the secret or the body. */
  error?: string;
  durationMs: number;
}
