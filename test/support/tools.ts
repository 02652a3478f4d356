import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export type Tool =
  | { available: true; path: string }
  /** `fatal`: running as root, the install was tried and failed; the suite should fail, not skip. */
  | { available: false; reason: string; fatal: boolean };

const ENSURE_TOOL = join(__dirname, '..', '..', 'scripts', 'ensure-tool.sh');

function which(command: string): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', command], { encoding: 'utf8' });
  const path = found.stdout.trim();
  return found.status === 0 && path !== '' ? path : undefined;
}

/**
 * A system tool a test needs (haproxy, docker-compose). When it is missing and the test runs as
 * root (CI on a fresh Debian machine), Debian's package is installed with scripts/ensure-tool.sh;
 * otherwise the answer says why the test cannot run, for a `describe.skip` with that message.
 * Synchronous, because jest decides what to skip while it collects the tests.
 */
export function ensureTool(command: string, debianPackage: string): Tool {
  const present = which(command);
  if (present) return { available: true, path: present };
  if (process.getuid?.() !== 0) {
    return {
      available: false,
      reason: `${command} is not installed and the tests do not run as root: install Debian's ${debianPackage} package (apt-get install ${debianPackage}) to run them`,
      fatal: false,
    };
  }
  const install = spawnSync(ENSURE_TOOL, [command, debianPackage], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 600_000,
  });
  const installed = which(command);
  if (install.status === 0 && installed) return { available: true, path: installed };
  return {
    available: false,
    reason: `${command} is missing and installing ${debianPackage} failed: ${(install.stderr || String(install.error ?? '')).trim()}`,
    fatal: true,
  };
}
