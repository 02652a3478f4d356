/*
 * keyward dashboard: plain browser JavaScript modules, no framework and no third-party code. The
 * page's CSP allows only this node's own modules and app.css, and calls to this node's /v1 API.
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
import { apiView, apisView, keyView } from './keys.js';
import { rbacView } from './rbac.js';

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
];

/**
 * Hash → view, first match first; the view gets the decoded groups of its pattern, and `page`
 * names the top-bar entry it belongs to. The last route (the APIs) takes any other hash.
 */
const ROUTES = [
  { pattern: /^#\/apis\/([^/]+)$/, page: 'APIs', view: apiView },
  { pattern: /^#\/keys\/([^/]+)$/, page: 'APIs', view: keyView },
  { pattern: /^#\/identities$/, page: 'Identities', view: identitiesView },
  { pattern: /^#\/identities\/([^/]+)$/, page: 'Identities', view: identityView },
  { pattern: /^#\/rbac$/, page: 'Roles & permissions', view: rbacView },
  { pattern: /^/, page: 'APIs', view: apisView },
];

function drawPages(current) {
  pages.replaceChildren(
    ...PAGES.map(({ label, href }) =>
      h('a', { href, 'aria-current': label === current ? 'page' : null }, label),
    ),
  );
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
  const hash = window.location.hash;
  const route = ROUTES.find(({ pattern }) => pattern.test(hash));
  drawPages(route.page);
  const view = route.view(...route.pattern.exec(hash).slice(1).map(decode));
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
