import {
  MAX_WEBHOOKS_PER_WORKSPACE,
  type WebhookEventType,
  type WebhookRecord,
} from '../../domain/webhook';
import { invalidField, PreconditionFailedError } from '../../errors';
import { newId } from '../../keys/ids';
import { newSecret, storedSecret } from '../../webhooks/secrets';
import { targetProblem, urlProblem } from '../../webhooks/targets';
import { auditEntry } from '../audit';
import { defineOperation } from '../operation';
import { object, string } from '../schemas';
import { creditsThreshold, webhookEvents, webhookUrl } from './views';

export interface CreateWebhookInput {
  url: string;
  events: WebhookEventType[];
  creditsThreshold?: number;
}

/**
 * keyward's own: a webhook of the workspace, told of the events it lists (docs/webhooks.md). The
 * secret that signs its deliveries is answered here, once.
 */
export const createWebhook = defineOperation({
  name: 'webhooks.createWebhook',
  method: 'POST',
  plane: 'management',
  summary:
    'Creates a webhook of the workspace for key.credits.low, key.credits.exhausted, key.ratelimited and key.expiring; answers its signing secret, once.',
  permission: { resource: 'webhook', action: 'create_webhook', scope: 'any' },
  input: object({ url: webhookUrl, events: webhookEvents, creditsThreshold }, ['url', 'events']),
  output: object({ webhookId: string, secret: string }, ['webhookId', 'secret']),
  uses: ['webhooks', 'webhookEvents', 'webhookAllowPrivate', 'vault', 'now'],
  check(input: CreateWebhookInput) {
    const problem = urlProblem(input.url);
    if (problem) throw invalidField(['url'], problem);
    if (input.events.includes('key.credits.low') && input.creditsThreshold === undefined) {
      throw invalidField(['creditsThreshold'], 'is required with key.credits.low');
    }
  },
  async handle(deps, caller, input: CreateWebhookInput) {
    // The signing secret is kept sealed, never in plaintext: no vault, no webhooks.
    const { vault } = deps;
    if (!vault) {
      throw new PreconditionFailedError(
        'webhooks need KEYWARD_VAULT_KEYS on the nodes: their signing secrets are stored sealed',
      );
    }
    const problem = await targetProblem(input.url, deps.webhookAllowPrivate);
    if (problem) throw invalidField(['url'], problem);
    const ws = caller.rootKey.workspaceId;
    if ((await deps.webhooks.count(ws)) >= MAX_WEBHOOKS_PER_WORKSPACE) {
      throw new PreconditionFailedError(
        `the workspace has ${MAX_WEBHOOKS_PER_WORKSPACE} webhooks, the most it may have`,
      );
    }
    const now = deps.now();
    const webhookId = newId('wh', now);
    const secret = newSecret();
    const record: WebhookRecord = {
      id: webhookId,
      workspaceId: ws,
      url: input.url,
      events: input.events,
      createdAt: now,
      secret: storedSecret(vault, secret, ws, webhookId),
      ...(input.creditsThreshold !== undefined ? { creditsThreshold: input.creditsThreshold } : {}),
    };
    await deps.webhooks.create(
      record,
      auditEntry(caller, 'webhooks.createWebhook', 'webhook', webhookId, {
        url: input.url,
        events: input.events,
        ...(input.creditsThreshold !== undefined
          ? { creditsThreshold: input.creditsThreshold }
          : {}),
      }),
    );
    deps.webhookEvents.forget(ws);
    return { webhookId, secret };
  },
});
