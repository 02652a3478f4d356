import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readlinkSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

/**
 * The release before keys were placed by their own ids (docs/redis.md, "Upgrading the
 * layout"): the tree as it was when every record of a workspace carried the `{ws}` tag.
 */
export const PREVIOUS_RELEASE = 'c62d6b0';

/**
 * Builds a commit of this repository from git into a folder of its own (git archive, this
 * checkout's node_modules, tsc) and answers its cli.js: a node of that release, for tests that
 * fill a Redis the way it did. Built once per machine and commit.
 */
/**
 * Points a build's node_modules at this checkout's. The build is shared by every clone on the
 * machine (it lives in the temporary folder), so the link a clone made before may lead into a
 * clone that is gone: it is set again on every use, by a rename, which another test file using
 * the same build at that moment never sees half done.
 */
function linkModules(dir: string): void {
  const link = join(dir, 'node_modules');
  const target = join(ROOT, 'node_modules');
  try {
    if (readlinkSync(link) === target) return;
  } catch {
    // No link yet (or not one): made below.
  }
  const fresh = `${link}.${process.pid}`;
  rmSync(fresh, { force: true });
  symlinkSync(target, fresh, 'dir');
  renameSync(fresh, link);
}

export async function buildRelease(commit: string = PREVIOUS_RELEASE): Promise<string> {
  const dir = join(tmpdir(), `keyward-release-${commit}`);
  const cli = join(dir, 'dist', 'cli.js');
  if (existsSync(cli)) {
    linkModules(dir);
    return cli;
  }
  try {
    await run('git', ['-C', ROOT, 'cat-file', '-e', `${commit}^{commit}`]);
  } catch {
    throw new Error(
      `commit ${commit} is not in this clone (a shallow clone?): the upgrade test builds the ` +
        'previous release from git; fetch the history (git fetch --unshallow)',
    );
  }
  mkdirSync(dir, { recursive: true });
  await run('sh', ['-c', `git -C "${ROOT}" archive ${commit} | tar -x -C "${dir}"`]);
  linkModules(dir);
  await run(
    process.execPath,
    [
      join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      join(dir, 'tsconfig.build.json'),
    ],
    {
      cwd: dir,
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  // As its `npm run build` does: the dashboard's files are served from dist/.
  await run('cp', ['-r', join(dir, 'src', 'http', 'dashboard'), join(dir, 'dist', 'http')]);
  return cli;
}
