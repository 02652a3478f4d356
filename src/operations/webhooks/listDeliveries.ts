import type { DeliveryAttempt } from '../../domain/webhook';
import { defineOperation } from '../operation';
import { integer, object, string } from '../schemas';
import { webhookId, webhookNotFound } from './views';

const attemptOutput = object(
  {
    eventId: string,
    type: string,
    attempt: integer,
    at: integer,
    status: integer,
    outcome: { type: 'string', enum: ['delivered', 'failed', 'abandoned'] },
    error: string,
    durationMs: integer,
  },
  ['eventId', 'type', 'attempt', 'at', 'outcome', 'durationMs'],
);

/** keyward's own: a webhook's latest delivery attempts (100), newest first. */
export const listDeliveries = defineOperation({
  name: 'webhooks.listDeliveries',
  method: 'GET',
  plane: 'management',
  summary:
    "A webhook's latest 100 delivery attempts, newest first: the event, the attempt's number, status or error, and outcome.",
  permission: { resource: 'webhook', action: 'read_webhook', scope: 'any' },
  input: object({ webhookId }, ['webhookId']),
  output: object({ deliveries: { type: 'array', items: attemptOutput } }, ['deliveries']),
  uses: ['webhooks'],
  async handle(
    deps,
    caller,
    input: { webhookId: string },
  ): Promise<{ deliveries: DeliveryAttempt[] }> {
    const ws = caller.rootKey.workspaceId;
    if (!(await deps.webhooks.get(ws, input.webhookId))) throw webhookNotFound(input.webhookId);
    return { deliveries: await deps.webhooks.deliveries(ws, input.webhookId) };
  },
});
