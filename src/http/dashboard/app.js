/*
 * keyward dashboard: plain browser JavaScript modules, no framework and no build step; the one
 * third-party module is uPlot (charts.js), served by this node from its npm package. The page's
 * CSP allows only this node's own modules and styles, and calls to this node's /v1 API.
 * This module signs in and routes; core.js holds what every page shares, and each page is a
 * module of its own.
 */
import {
  ApiError,
  app,
  clearNotice,
  decode,
  field,
  form,
  get,
  h,
  logout,
  onDraw,
  rootKey,
  setCrumbs,
  setNotice,
  setRootKey,
  showError,
  takeFlash,
} from './core.js';
import { identitiesView, identityView } from './identities.js';
import { auditView } from './audit.js';
import { apiView, apisView, keyView } from './keys.js';
import { rbacView } from './rbac.js';
import { usageView } from './usage.js';
import { webhooksView, webhookView } from './webhooks.js';

const logoutButton = document.getElementById('logout');
const pages = document.getElementById('pages');

// ---------------------------------------------------------------- session

function loginView() {
  setCrumbs();
  const input = h('input', {
    id: 'root-key',
    type: 'password',
    autocomplete: 'off',
    spellcheck: false,
    required: true,
    placeholder: 'kwroot_…',
  });
  app.append(
    h(
      'section.card.login',
      {},
      h('h1', {}, 'Sign in'),
      h(
        'p.muted',
        {},
        'Paste a root key. It stays in this tab’s session storage, is sent to this node only, ' +
          'and is forgotten when you log out or close the tab.',
      ),
      form('stack', [field('Root key', input), h('button.primary', {}, 'Sign in')], async () => {
        setRootKey(input.value.trim());
        input.value = '';
        try {
          await get('apis.listApis', { limit: 1 });
        } catch (error) {
          if (error instanceof ApiError && error.code === 'UNAUTHORIZED') throw error;
          render();
          throw error;
        }
        render();
      }),
    ),
  );
  input.focus();
}

// ---------------------------------------------------------------- routing

/** The top bar's pages, in order. A new page is one entry here and its routes below. */
const PAGES = [
  { label: 'APIs', href: '#/' },
  { label: 'Identities', href: '#/identities' },
  { label: 'Roles & permissions', href: '#/rbac' },
  { label: 'Usage', href: '#/usage' },
  { label: 'Audit log', href: '#/audit' },
  { label: 'Webhooks', href: '#/webhooks' },
];

/**
 * Hash → view, first match first: a pattern matches the hash up to its query (`?…`), and the
 * view gets the decoded groups of its pattern, then the query as URLSearchParams; `page` names
 * the top-bar entry it belongs to. The last route (the APIs) takes any other hash.
 */
const ROUTES = [
  { pattern: /^#\/apis\/([^/]+)$/, page: 'APIs', view: apiView },
  { pattern: /^#\/keys\/([^/]+)$/, page: 'APIs', view: keyView },
  { pattern: /^#\/identities$/, page: 'Identities', view: identitiesView },
  { pattern: /^#\/identities\/([^/]+)$/, page: 'Identities', view: identityView },
  { pattern: /^#\/rbac$/, page: 'Roles & permissions', view: rbacView },
  { pattern: /^#\/usage$/, page: 'Usage', view: usageView },
  { pattern: /^#\/audit$/, page: 'Audit log', view: auditView },
  { pattern: /^#\/webhooks$/, page: 'Webhooks', view: webhooksView },
  { pattern: /^#\/webhooks\/([^/]+)$/, page: 'Webhooks', view: webhookView },
  { pattern: /^/, page: 'APIs', view: apisView },
];

function drawPages(current) {
  pages.replaceChildren(
    ...PAGES.map(({ label, href }) =>
      h('a', { href, 'aria-current': label === current ? 'page' : null }, label),
    ),
  );
}

/** `#/usage?apiId=a` → ['#/usage', 'apiId=a']. */
function splitHash(hash) {
  const at = hash.indexOf('?');
  return at < 0 ? [hash, ''] : [hash.slice(0, at), hash.slice(at + 1)];
}

let generation = 0;

/** Draws the view of the current hash (see ROUTES), or the sign-in form. */
function render() {
  generation += 1;
  const current = generation;
  clearNotice();
  const message = takeFlash();
  if (message !== null) setNotice('ok', message);
  app.replaceChildren();
  const signedIn = rootKey() !== null;
  logoutButton.hidden = pages.hidden = !signedIn;
  if (!signedIn) {
    loginView();
    return;
  }
  const [path, query] = splitHash(window.location.hash);
  const route = ROUTES.find(({ pattern }) => pattern.test(path));
  drawPages(route.page);
  const groups = route.pattern.exec(path).slice(1).map(decode);
  const view = route.view(...groups, new URLSearchParams(query));
  view.catch((error) => {
    if (current === generation) showError(error);
  });
}

onDraw(render);
logoutButton.addEventListener('click', () => {
  logout();
  setNotice('ok', 'Logged out: the root key is gone from this tab.');
});
window.addEventListener('hashchange', render);
render();
