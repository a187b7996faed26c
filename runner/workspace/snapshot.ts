import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RunnerError } from '../errors';
import { GIT_LOCAL_TIMEOUT_MS, firstLine, gitEnv } from './git';

/** Diffs and merged trees of sessions are read whole; a bigger one is a generated-file war, not something to read. */
const SNAPSHOT_GIT_MAX_BUFFER = 64 * 1024 * 1024;
/** The snapshot commits need an identity; they are never on a branch, so it is only a label. */
const SNAPSHOT_IDENTITY = { GIT_AUTHOR_NAME: 'Agent Village snapshot', GIT_AUTHOR_EMAIL: 'snapshot@agent-village.invalid', GIT_COMMITTER_NAME: 'Agent Village snapshot', GIT_COMMITTER_EMAIL: 'snapshot@agent-village.invalid' };

export interface GitRun {
  code: number;
  stdout: string;
}

/** git with the runner's clean environment plus `extraEnv`; exit codes in `okCodes` are answers, not failures. */
export function runGit(args: string[], cwd: string, extraEnv: Record<string, string> = {}, okCodes: number[] = [0]): Promise<GitRun> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env: { ...gitEnv(), ...extraEnv }, timeout: GIT_LOCAL_TIMEOUT_MS, maxBuffer: SNAPSHOT_GIT_MAX_BUFFER, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1) : 0;
      if (okCodes.includes(code)) return resolve({ code, stdout });
      reject(new RunnerError('RUNNER_ERROR', `git ${args[0]} failed: ${firstLine(stderr) || (err as Error).message}`));
    });
  });
}

/**
 * The session's work as one commit, without touching its worktree, index or branch: HEAD plus
 * every tracked, staged, unstaged and untracked-but-not-ignored change, written through a
 * throw-away index. The commit is dangling (git gc collects it).
 */
export async function snapshotWorktree(worktree: string, label: string): Promise<string> {
  const index = path.join(os.tmpdir(), `av-radar-${randomBytes(6).toString('hex')}.index`);
  const env = { GIT_INDEX_FILE: index, ...SNAPSHOT_IDENTITY };
  try {
    const head = (await runGit(['rev-parse', '--verify', 'HEAD^{commit}'], worktree)).stdout.trim();
    await runGit(['read-tree', head], worktree, env);
    await runGit(['add', '-A', '--', '.'], worktree, env);
    const tree = (await runGit(['write-tree'], worktree, env)).stdout.trim();
    return (await runGit(['commit-tree', tree, '-p', head, '-m', `radar snapshot of ${label}`], worktree, env)).stdout.trim();
  } finally {
    await fs.promises.rm(index, { force: true });
  }
}

