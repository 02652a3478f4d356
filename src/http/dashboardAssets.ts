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
] as const;

export interface Asset {
  type: string;
  body: string;
}

export function loadDashboardAssets(): Record<string, Asset> {
  const asset = (file: string, type: string): Asset => ({
    type,
    body: readFileSync(join(DIR, file), 'utf8'),
  });
  const modules = DASHBOARD_MODULES.map((file) => [
    `/dashboard/${file}`,
    asset(file, 'application/javascript'),
  ]);
  return {
    '/dashboard': asset('index.html', 'html'),
    ...Object.fromEntries(modules),
    '/dashboard/app.css': asset('app.css', 'text/css'),
  };
}

/** The page calls only this node's API; scripts and styles come from this node alone. */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
