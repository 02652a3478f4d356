import type { WebhookEventType } from '../domain/webhook';
import { createWebhook, type CreateWebhookInput } from '../operations/webhooks/createWebhook';
import { deleteWebhook } from '../operations/webhooks/deleteWebhook';
import { listDeliveries } from '../operations/webhooks/listDeliveries';
import { listWebhooks } from '../operations/webhooks/listWebhooks';
import type { CommandSpec } from './framework';
import { emit, isoTime, table } from './output';
import { operate, workspaceArgument, workspaceOption } from './services';
import { integerFlag, validateAs } from './validate';

/** `keyward webhooks …`: a workspace's webhooks (docs/webhooks.md), through their operations. */

const webhookIdArg = { name: 'webhookId', description: 'the webhook id (wh_…)' };

const create: CommandSpec = {
  path: ['webhooks', 'create'],
  brief: 'create a webhook; prints its signing secret once',
  summary:
    'Creates a webhook of a workspace, as webhooks.createWebhook does (the same checks, the private-address rule of KEYWARD_WEBHOOK_ALLOW_PRIVATE included), and prints its signing secret, which is never shown again.',
  options: {
    workspace: workspaceOption,
    url: { type: 'string', value: 'URL', required: true, description: 'where events are POSTed' },
    events: {
      type: 'string',
      value: 'LIST',
      required: true,
      description:
        'comma-separated: key.credits.low, key.credits.exhausted, key.ratelimited, key.expiring',
    },
    threshold: {
      type: 'string',
      value: 'N',
      description: 'credits at or below which key.credits.low fires (required with it)',
    },
  },
  example:
    'keyward webhooks create --workspace ws_… --url https://hooks.example.com/keyward --events key.credits.low --threshold 100',
  async run(invocation, runtime) {
    const threshold = integerFlag(invocation.string('threshold'), '--threshold', create);
    const input = validateAs<CreateWebhookInput>(
      createWebhook,
      {
        url: invocation.required('url'),
        events: invocation
          .required('events')
          .split(',')
          .map((event) => event.trim() as WebhookEventType),
        ...(threshold !== undefined ? { creditsThreshold: threshold } : {}),
      },
      { url: '--url', events: '--events', creditsThreshold: '--threshold' },
      create,
    );
    const ws = await workspaceArgument(invocation, runtime);
    const created = await operate(runtime, ws, createWebhook, input);
    emit(invocation, created, () => [
      `created webhook ${created.webhookId}`,
      `secret (shown once): ${created.secret}`,
    ]);
    return 0;
  },
};

const list: CommandSpec = {
  path: ['webhooks', 'list'],
  brief: "list a workspace's webhooks",
  summary: "Prints a workspace's webhooks, oldest first, as webhooks.listWebhooks answers them.",
  options: { workspace: workspaceOption },
  example: 'keyward webhooks list --workspace ws_1ChFjYcXVVm7ah74PHsyRc',
  async run(invocation, runtime) {
    const ws = await workspaceArgument(invocation, runtime);
    const answer = await operate(runtime, ws, listWebhooks, {} as never);
    emit(invocation, { workspaceId: ws, ...answer }, () =>
      answer.webhooks.length === 0
        ? [`no webhooks in ${ws}`]
        : table(
            ['ID', 'URL', 'EVENTS', 'THRESHOLD', 'CREATED'],
            answer.webhooks.map((hook) => [
              hook.webhookId,
              hook.url,
              hook.events.join(','),
              hook.creditsThreshold === undefined ? '-' : String(hook.creditsThreshold),
              isoTime(hook.createdAt),
            ]),
          ),
    );
    return 0;
  },
};

const remove: CommandSpec = {
  path: ['webhooks', 'delete'],
  brief: 'delete a webhook and its undelivered events',
  summary: 'Deletes a webhook, as webhooks.deleteWebhook does.',
  options: { workspace: workspaceOption },
  args: [webhookIdArg],
  example: 'keyward webhooks delete --workspace ws_… wh_1ChFjUG4o6VLuzbLGABNDC',
  async run(invocation, runtime) {
    const webhookId = invocation.args[0] ?? '';
    const ws = await workspaceArgument(invocation, runtime);
    await operate(runtime, ws, deleteWebhook, { webhookId });
    emit(invocation, { webhookId, deleted: true }, () => [`deleted webhook ${webhookId}`]);
    return 0;
  },
};

const deliveries: CommandSpec = {
  path: ['webhooks', 'deliveries'],
  brief: "show a webhook's latest delivery attempts",
  summary:
    "Prints a webhook's latest 100 delivery attempts, newest first, as webhooks.listDeliveries answers them.",
  options: { workspace: workspaceOption },
  args: [webhookIdArg],
  example: 'keyward webhooks deliveries --workspace ws_… wh_1ChFjUG4o6VLuzbLGABNDC',
  async run(invocation, runtime) {
    const webhookId = invocation.args[0] ?? '';
    const ws = await workspaceArgument(invocation, runtime);
    const answer = await operate(runtime, ws, listDeliveries, { webhookId });
    emit(invocation, { webhookId, ...answer }, () =>
      answer.deliveries.length === 0
        ? [`no delivery attempts for ${webhookId}`]
        : table(
            ['TIME', 'EVENT', 'TYPE', 'ATTEMPT', 'STATUS', 'OUTCOME'],
            answer.deliveries.map((attempt) => [
              isoTime(attempt.at),
              attempt.eventId,
              attempt.type,
              String(attempt.attempt),
              attempt.status !== undefined ? String(attempt.status) : (attempt.error ?? '-'),
              attempt.outcome,
            ]),
          ),
    );
    return 0;
  },
};

export const webhookCommands: readonly CommandSpec[] = [create, list, remove, deliveries];
