import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
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
export async function buildRelease(commit: string = PREVIOUS_RELEASE): Promise<string> {
  const dir = join(tmpdir(), `keyward-release-${commit}`);
  const cli = join(dir, 'dist', 'cli.js');
  if (existsSync(cli)) return cli;
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
  if (!existsSync(join(dir, 'node_modules'))) {
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  }
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
