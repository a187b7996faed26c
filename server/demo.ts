import { execFile } from 'node:child_process';
import { cp, access } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from './env';

const run = promisify(execFile);
const DEMO_SOURCE = resolve(PROJECT_ROOT, 'server/demo/repo');

/**
 * The demo repository ships as plain files (a git repository cannot nest in ours); on first start
 * it becomes a real git repository under the data folder, which is then registered like any other.
 */
export async function materializeDemoRepo(dataDir: string): Promise<string> {
  const target = join(dataDir, 'demo-repo', 'lamplighter');
  try {
    await access(join(target, '.git'));
    return target;
  } catch {
    // first start: create it below
  }
  await cp(DEMO_SOURCE, target, { recursive: true });
  const git = (...args: string[]) =>
    run('git', ['-c', 'user.name=Agent Village', '-c', 'user.email=village@localhost', '-c', 'init.defaultBranch=main', ...args], { cwd: target });
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-q', '-m', 'Lamplighter: lamps, schedule, API, tests and docs');
  return target;
}
