import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RadarSide } from '../../protocol';
import { RunnerError } from '../errors';
import { firstLine } from '../workspace/git';
import { runGit, snapshotWorktree } from '../workspace/snapshot';
import { gitWithInput } from './git-input';

/** The side commits are never on a branch, so their identity is only a label. */
const SIDE_IDENTITY = { GIT_AUTHOR_NAME: 'Agent Village radar', GIT_AUTHOR_EMAIL: 'radar@agent-village.invalid', GIT_COMMITTER_NAME: 'Agent Village radar', GIT_COMMITTER_EMAIL: 'radar@agent-village.invalid' };

type PatchSide = Extract<RadarSide, { kind: 'patch' }>;

/** Whether this clone holds the commit (a missing one is an answer, not a failure). */
export async function hasCommit(cwd: string, sha: string): Promise<boolean> {
  const r = await runGit(['rev-parse', '--verify', '--quiet', `${sha}^{commit}`], cwd, {}, [0, 1, 128]);
  return r.code === 0;
}

const whose = (s: PatchSide) => (s.origin === 'dta' ? `the DTA run ${s.id}'s` : `session ${s.id}'s (from the other runner)`);

/**
 * base + patch as one dangling commit, through a throw-away index: `read-tree base`, `apply
 * --cached`, `write-tree`, `commit-tree`. No worktree, index or branch is touched, so a DTA run
 * waiting for approval (or applying in its own worktree) is not disturbed.
 */
export async function commitFromPatch(cwd: string, side: PatchSide, refresh?: () => Promise<void>): Promise<string> {
  // A DTA that ran on another runner may start from a commit this clone has not fetched yet.
  if (!(await hasCommit(cwd, side.base)) && refresh) await refresh();
  if (!(await hasCommit(cwd, side.base))) {
    throw new RunnerError(
      'CONFLICT',
      side.origin === 'dta'
        ? `the DTA's base commit ${side.base.slice(0, 12)} is not in this runner's clone of the repository`
        : `commit ${side.base.slice(0, 12)} (the merge base the other runner chose) is not in this runner's clone: the two runners' clones differ`,
    );
  }
  const index = path.join(os.tmpdir(), `av-radar-${randomBytes(6).toString('hex')}.index`);
  const env = { GIT_INDEX_FILE: index, ...SIDE_IDENTITY };
  try {
    await runGit(['read-tree', side.base], cwd, env);
    if (side.patch.trim() !== '') {
      const applied = await gitWithInput(['apply', '--cached', '--whitespace=nowarn', '-'], cwd, side.patch, env);
      if (applied.code !== 0) {
        const why = firstLine(applied.stderr);
        throw new RunnerError(
          'CONFLICT',
          side.origin === 'dta'
            ? `the DTA's patch no longer applies to its base${why ? ` (${why})` : ''}`
            : `${whose(side)} patch does not apply to its base here${why ? ` (${why})` : ''}`,
        );
      }
    }
    const tree = (await runGit(['write-tree'], cwd, env)).stdout.trim();
    return (await runGit(['commit-tree', tree, '-p', side.base, '-m', `radar side of ${side.id}`], cwd, env)).stdout.trim();
  } finally {
    await fs.promises.rm(index, { force: true });
  }
}

export interface SideDeps {
  /** The worktree of a live session of this runner, or null. */
  worktreeOf(sessionId: string): string | null;
  /** Fetch the repository's clone from its source (once, when a patch's base is missing). */
  refreshClone?(repoId: string): Promise<void>;
}

/** A side as a commit in this runner's clone: a session's snapshot, or base + patch. */
export async function sideCommit(side: RadarSide, repoId: string, repoDir: string, deps: SideDeps): Promise<string> {
  if (side.kind === 'patch') return commitFromPatch(repoDir, side, deps.refreshClone ? () => deps.refreshClone!(repoId) : undefined);
  const wt = deps.worktreeOf(side.id);
  if (!wt) throw new RunnerError('NOT_FOUND', `no live worktree on this runner for ${side.id}`);
  return snapshotWorktree(wt, side.id);
}
