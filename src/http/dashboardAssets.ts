import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The dashboard's static files, read once at start-up. They sit beside this module (the build
 * copies them into dist/), so a node serves them without any CDN.
 */
const DIR = join(__dirname, 'dashboard');

/** The page's ES modules: app.js is its entry point and imports the others. */
export const DASHBOARD_MODULES = [
  'app.js',
  'core.js',
  'keys.js',
  'identities.js',
  'limits.js',
  'rbac.js',
  'usage.js',
  'namespaceUsage.js',
  'charts.js',
  'audit.js',
  'webhooks.js',
] as const;

/**
 * Third-party files the page loads, served from their npm package as installed (a production
 * dependency, so both `dist/` and the sources find it): uPlot (MIT) draws the usage charts. Its
 * ES module imports nothing, and it styles its elements through the CSSOM, which a
 * `style-src 'self'` allows.
 */
export const DASHBOARD_VENDORED = {
  'uplot.js': { from: 'uplot/dist/uPlot.esm.js', type: 'application/javascript' },
  'uplot.css': { from: 'uplot/dist/uPlot.min.css', type: 'text/css' },
} as const;

export interface Asset {
  type: string;
  body: string;
}

export function loadDashboardAssets(): Record<string, Asset> {
  const asset = (path: string, type: string): Asset => ({ type, body: readFileSync(path, 'utf8') });
  const modules = DASHBOARD_MODULES.map((file) => [
    `/dashboard/${file}`,
    asset(join(DIR, file), 'application/javascript'),
  ]);
  const vendored = Object.entries(DASHBOARD_VENDORED).map(([file, { from, type }]) => [
    `/dashboard/${file}`,
    asset(require.resolve(from), type),
  ]);
  return {
    '/dashboard': asset(join(DIR, 'index.html'), 'html'),
    ...Object.fromEntries(modules),
    ...Object.fromEntries(vendored),
    '/dashboard/app.css': asset(join(DIR, 'app.css'), 'text/css'),
  };
}

/** The page calls only this node's API; scripts and styles come from this node alone. */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
