import { WEBHOOK_EVENTS, type WebhookRecord } from '../../domain/webhook';
import { NotFoundError } from '../../errors';
import { id, integer, LIMIT_MAX, object, string } from '../schemas';

/** What the webhook operations share: their input fields, views and the 404. */

export const webhookId = { ...id, pattern: '^[A-Za-z0-9_]{1,64}$' } as const;
export const webhookUrl = { type: 'string', minLength: 1, maxLength: 2048 } as const;
export const webhookEvents = {
  type: 'array',
  minItems: 1,
  maxItems: WEBHOOK_EVENTS.length,
  uniqueItems: true,
  items: { type: 'string', enum: WEBHOOK_EVENTS },
} as const;
export const creditsThreshold = { type: 'integer', minimum: 0, maximum: LIMIT_MAX } as const;

export interface WebhookView {
  webhookId: string;
  url: string;
  events: string[];
  creditsThreshold?: number;
  createdAt: number;
}

export const webhookOutput = object(
  {
    webhookId: string,
    url: string,
    events: { type: 'array', items: string },
    creditsThreshold: integer,
    createdAt: integer,
  },
  ['webhookId', 'url', 'events', 'createdAt'],
);

/** A webhook as the operations answer it: never its secret, in any form. */
export function webhookView(record: WebhookRecord): WebhookView {
  return {
    webhookId: record.id,
    url: record.url,
    events: [...record.events],
    ...(record.creditsThreshold !== undefined ? { creditsThreshold: record.creditsThreshold } : {}),
    createdAt: record.createdAt,
  };
}

export function webhookNotFound(webhookId: string): NotFoundError {
  return new NotFoundError('webhook', `webhook ${webhookId} not found`);
}
