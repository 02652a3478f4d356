/*
 * keyward dashboard: the workspace's webhooks (#/webhooks, webhooks.listWebhooks) with a form to
 * create one (its secret shown once) and Delete on each, and one webhook's latest delivery
 * attempts (#/webhooks/<id>, webhooks.listDeliveries): the event, the attempt, the receiver's
 * status or why none came, and the outcome. docs/webhooks.md says what each event means.
 */
import {
  app,
  dateTime,
  deleteButton,
  emptyRow,
  field,
  form,
  get,
  h,
  navigate,
  orDash,
  post,
  setCrumbs,
  setNotice,
  table,
} from './core.js';

const EVENTS = ['key.credits.low', 'key.credits.exhausted', 'key.ratelimited', 'key.expiring'];

export const webhookHref = (webhookId) => `#/webhooks/${encodeURIComponent(webhookId)}`;

function webhookRow(hook) {
  return h(
    'tr',
    {},
    h('td', {}, h('a', { href: webhookHref(hook.webhookId) }, h('code', {}, hook.webhookId))),
    h('td', {}, h('code', {}, hook.url)),
    h('td', {}, hook.events.join(', ')),
    h('td', {}, orDash(hook.creditsThreshold)),
    h('td', {}, dateTime(hook.createdAt)),
    h(
      'td',
      {},
      deleteButton(hook.webhookId, 'Delete this webhook and its undelivered events?', async () => {
        await post('webhooks.deleteWebhook', { webhookId: hook.webhookId });
        navigate('#/webhooks', `Webhook ${hook.webhookId} deleted.`);
      }),
    ),
  );
}

function createForm() {
  const url = h('input', {
    type: 'url',
    required: true,
    maxLength: 2048,
    placeholder: 'https://hooks.example.com/keyward',
    spellcheck: false,
  });
  const boxes = EVENTS.map((event) => h('input', { type: 'checkbox', value: event }));
  const threshold = h('input', { type: 'number', min: 0, step: 1, placeholder: '100' });
  const created = form(
    'stack',
    [
      field('URL', url),
      h(
        'div.field',
        {},
        h('span', {}, 'Events'),
        boxes.map((box) => h('label.check', {}, box, ` ${box.value}`)),
      ),
      field('Credits threshold (key.credits.low)', threshold),
      h('button.primary', {}, 'Create webhook'),
    ],
    async () => {
      const events = boxes.filter((box) => box.checked).map((box) => box.value);
      const answer = await post('webhooks.createWebhook', {
        url: url.value.trim(),
        events,
        ...(threshold.value === '' ? {} : { creditsThreshold: Number(threshold.value) }),
      });
      navigate('#/webhooks');
      // Shown once: keyward keeps it only to sign, and never answers it again.
      setNotice(
        'ok',
        `Webhook ${answer.webhookId} created. Its signing secret, shown only now: `,
        h('code.secret', {}, answer.secret),
      );
    },
  );
  return h('section.card', {}, h('h2', {}, 'New webhook'), created);
}

export async function webhooksView() {
  setCrumbs();
  const { webhooks } = await get('webhooks.listWebhooks', {});
  const body = h(
    'tbody',
    {},
    webhooks.length === 0 ? emptyRow(6, 'No webhooks.') : webhooks.map(webhookRow),
  );
  app.append(
    h('div.heading', {}, h('h1', {}, 'Webhooks')),
    h(
      'p.muted.intro',
      {},
      'Endpoints told, by a signed POST, when a key’s credits run low or out, when a rate limit ' +
        'refuses a key, and when a key is about to expire. Reading them needs ' +
        'webhook.*.read_webhook.',
    ),
    table(['Webhook', 'URL', 'Events', 'Threshold', 'Created', ''], body),
    createForm(),
  );
}

function attemptRow(attempt) {
  return h(
    'tr',
    {},
    h('td', {}, dateTime(attempt.at)),
    h('td', {}, h('span', {}, attempt.type), ' ', h('code.muted', {}, attempt.eventId)),
    h('td', {}, String(attempt.attempt)),
    h('td', {}, attempt.status !== undefined ? String(attempt.status) : orDash(attempt.error)),
    h(`td.outcome.${attempt.outcome}`, {}, attempt.outcome),
    h('td', {}, `${attempt.durationMs} ms`),
  );
}

export async function webhookView(webhookId) {
  setCrumbs(['Webhooks', '#/webhooks'], [webhookId]);
  const { deliveries } = await get('webhooks.listDeliveries', { webhookId });
  const body = h(
    'tbody',
    {},
    deliveries.length === 0 ? emptyRow(6, 'No delivery attempts yet.') : deliveries.map(attemptRow),
  );
  app.append(
    h('div.heading', {}, h('h1', {}, 'Deliveries'), h('code', {}, webhookId)),
    h(
      'p.muted.intro',
      {},
      'The latest 100 attempts, newest first. A failed one is retried with backoff for 24 h; ' +
        'a receiver drops repeats of an event by its id.',
    ),
    table(['When', 'Event', 'Attempt', 'Status or error', 'Outcome', 'Took'], body),
  );
}
