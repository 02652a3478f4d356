import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The package version, read once: shown in /openapi.json and by `keyward --version`. */
export const VERSION: string = (
  JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }
).version;
