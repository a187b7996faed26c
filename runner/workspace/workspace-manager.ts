import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { RepoDir, RepoTree } from '../../protocol';
import { RunnerError } from '../errors';
import { errorMessage, type Logger } from '../log';
import { GIT_NETWORK_TIMEOUT_MS, GitError, git } from './git';

/**
 * Git workspaces (agent-runner.md §4.1):
 * - one cached bare clone per repository at `<data-dir>/repos/<repo_id>.git`, fetched before every
 *   new worktree and every scan;
 * - one `git worktree` per session at `<data-dir>/worktrees/<session_id>`:
 *   write mode → new branch `agent/<session_id>` from the checkout ref (kept in the bare clone
 *   after the session, it is the agent's work);
 *   read_only mode → detached HEAD, and every file and directory made read-only (`chmod -R a-w`)
 *   so an audit cannot change the tree by accident. That binds a non-root session (which could
 *   still chmod it back) and not root at all; read-only.ts (mount namespace) and the session's
 *   detect-and-revert watcher are what hold for root (README, "Read-only sessions").
 * - removed with `git worktree remove --force` + `git worktree prune` when the session ends.
 */

/** RepoTree carries at most this many directories; the village would be unreadable beyond it. */
export const MAX_SCAN_DIRS = 5000;

/** Session branches live under this prefix (local to the runner's clone; the source never has them). */
export const AGENT_BRANCH_PREFIX = 'agent/';
/**
 * The source's branches are fetched as remote-tracking refs, never straight over the local ones:
 * the local branches are the runner's (agent branches, and merges a person approved into main).
 * syncLocalBranches then moves each local branch to the source's when that is a fast-forward.
 */
const FETCH_REFSPECS = ['+refs/heads/*:refs/remotes/origin/*'];

export type WorkspaceMode = 'write' | 'read_only';

export interface PrepareWorktreeInput {
  session_id: string;
  repo_id: string;
  source: string;
  checkout: { type: 'branch' | 'commit'; ref: string };
  mode: WorkspaceMode;
}

export interface PreparedWorktree {
  path: string;
  /** `agent/<session_id>` in write mode; '' for the detached read-only worktree. */
  branch: string;
  sha: string;
  mode: WorkspaceMode;
}

/** Absolute local paths and the URL forms git understands; nothing that could pass for an option. */
export function validateSource(source: string): string | null {
  if (source.startsWith('-')) return 'invalid repository source: must not start with "-"';
  if (source.includes('\n') || source.includes('\0')) return 'invalid repository source: contains control characters';
  if (path.isAbsolute(source)) return null;
  if (/^(https?|ssh|git|file):\/\//.test(source)) return null;
  if (/^[\w.-]+@[\w.-]+:/.test(source)) return null;
  return 'invalid repository source: must be an absolute local path or a git URL';
}

function chmodRecursive(target: string, mode: 'a-w' | 'u+w'): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('chmod', ['-R', mode, '--', target], (err, _stdout, stderr) => {
      if (err) reject(new RunnerError('RUNNER_ERROR', `chmod ${mode} failed: ${stderr.trim() || err.message}`));
      else resolve();
    });
  });
}

export class WorkspaceManager {
  readonly reposDir: string;
  readonly worktreesDir: string;
  /** Serializes git operations per bare clone; concurrent fetch/worktree add fight over ref locks. */
  private readonly repoLocks = new Map<string, Promise<unknown>>();
  private readonly worktreeRepo = new Map<string, string>();

  constructor(
    dataDir: string,
    private readonly log: Logger,
  ) {
    this.reposDir = path.join(dataDir, 'repos');
    this.worktreesDir = path.join(dataDir, 'worktrees');
  }

  async init(): Promise<void> {
    await fs.promises.mkdir(this.reposDir, { recursive: true });
    await fs.promises.mkdir(this.worktreesDir, { recursive: true });
  }

  barePath(repoId: string): string {
    return path.join(this.reposDir, `${repoId}.git`);
  }

  worktreePath(sessionId: string): string {
    return path.join(this.worktreesDir, sessionId);
  }

  /** Clone on first use, fetch afterwards; returns the bare clone's path. */
  ensureClone(repoId: string, source: string): Promise<string> {
    return this.withRepoLock(repoId, () => this.ensureCloneLocked(repoId, source));
  }

  prepareWorktree(input: PrepareWorktreeInput): Promise<PreparedWorktree> {
    return this.withRepoLock(input.repo_id, async () => {
      const bare = await this.ensureCloneLocked(input.repo_id, input.source);
      const sha = await this.resolveCheckout(bare, input.checkout);
      const wt = this.worktreePath(input.session_id);
      if (fs.existsSync(wt)) throw new RunnerError('CONFLICT', `worktree ${wt} already exists`);
      const branch = input.mode === 'write' ? `${AGENT_BRANCH_PREFIX}${input.session_id}` : '';
      const args = input.mode === 'write' ? ['worktree', 'add', '-b', branch, wt, sha] : ['worktree', 'add', '--detach', wt, sha];
      await git(args, { cwd: bare, what: 'worktree add' });
      this.worktreeRepo.set(input.session_id, bare);
      if (input.mode === 'read_only') await chmodRecursive(wt, 'a-w');
      return { path: wt, branch, sha, mode: input.mode };
    });
  }

  /** Never throws: the worktree directory is gone afterwards even when git could not help. */
  async removeWorktree(sessionId: string): Promise<void> {
    const wt = this.worktreePath(sessionId);
    const bare = this.worktreeRepo.get(sessionId) ?? this.bareOfWorktree(wt);
    this.worktreeRepo.delete(sessionId);
    if (fs.existsSync(wt)) await chmodRecursive(wt, 'u+w').catch((err) => this.log.warn(errorMessage(err)));
    if (bare) {
      const repoId = path.basename(bare, '.git');
      await this.withRepoLock(repoId, async () => {
        if (fs.existsSync(wt)) {
          await git(['worktree', 'remove', '--force', wt], { cwd: bare, what: 'worktree remove' }).catch((err) =>
            this.log.warn(`${errorMessage(err)}; deleting ${wt} by hand`),
          );
        }
        await fs.promises.rm(wt, { recursive: true, force: true });
        await git(['worktree', 'prune'], { cwd: bare, what: 'worktree prune' }).catch((err) => this.log.warn(errorMessage(err)));
      });
    } else {
      await fs.promises.rm(wt, { recursive: true, force: true });
    }
  }

  /** At start every worktree is an orphan: the PTYs that used them died with the last runner. */
  async cleanupOrphans(): Promise<number> {
    let removed = 0;
    for (const name of await fs.promises.readdir(this.worktreesDir)) {
      const wt = path.join(this.worktreesDir, name);
      try {
        await chmodRecursive(wt, 'u+w').catch(() => undefined);
        await fs.promises.rm(wt, { recursive: true, force: true });
        removed++;
      } catch (err) {
        this.log.error(`could not remove orphaned worktree ${wt}`, err);
      }
    }
    for (const name of await fs.promises.readdir(this.reposDir)) {
      if (!name.endsWith('.git')) {
        // A clone that was interrupted by the last shutdown.
        if (name.includes('.git.tmp-')) await fs.promises.rm(path.join(this.reposDir, name), { recursive: true, force: true });
        continue;
      }
      await git(['worktree', 'prune'], { cwd: path.join(this.reposDir, name), what: 'worktree prune' }).catch((err) =>
        this.log.warn(errorMessage(err)),
      );
    }
    if (removed > 0) this.log.info(`removed ${removed} orphaned worktree(s)`);
    return removed;
  }

  /** Fresh tree of the default branch: directories with the count of files directly in them. */
  scan(repoId: string, source: string): Promise<RepoTree> {
    return this.withRepoLock(repoId, async () => {
      const bare = await this.ensureCloneLocked(repoId, source);
      const headSha = (await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { cwd: bare, what: 'rev-parse' }).catch(() => '')).trim();
      if (!headSha) throw new RunnerError('BAD_REQUEST', 'repository has no commits on its default branch');
      const defaultBranch = (await git(['symbolic-ref', '--short', 'HEAD'], { cwd: bare, what: 'symbolic-ref' }).catch(() => 'HEAD')).trim() || 'HEAD';
      const listing = await git(['ls-tree', '-r', '-z', '--full-tree', 'HEAD'], { cwd: bare, what: 'ls-tree' });
      return { default_branch: defaultBranch, head_sha: headSha, ...countDirs(listing) };
    });
  }

  // ---- internals ----

  private async ensureCloneLocked(repoId: string, source: string): Promise<string> {
    const invalid = validateSource(source);
    if (invalid) throw new RunnerError('BAD_REQUEST', invalid);
    const bare = this.barePath(repoId);
    if (await this.isBareRepo(bare)) {
      const current = (await git(['config', '--get', 'remote.origin.url'], { cwd: bare, what: 'config' }).catch(() => '')).trim();
      if (current !== source) {
        this.log.info(`repository ${repoId} now comes from ${source} (was ${current || 'unset'})`);
        await git(['remote', 'set-url', 'origin', source], { cwd: bare, what: 'remote set-url' }).catch(() =>
          git(['remote', 'add', 'origin', source], { cwd: bare, what: 'remote add' }),
        );
      }
      await git(['fetch', '--prune', '--quiet', 'origin', ...FETCH_REFSPECS], { cwd: bare, what: 'fetch', timeoutMs: GIT_NETWORK_TIMEOUT_MS });
      await this.syncLocalBranches(bare, repoId);
      return bare;
    }
    await fs.promises.rm(bare, { recursive: true, force: true });
    // Clone beside the final path and rename, so a crash never leaves a half clone that looks valid.
    const tmp = `${bare}.tmp-${randomBytes(4).toString('hex')}`;
    try {
      await git(['clone', '--bare', '--quiet', '--', source, tmp], { what: 'clone', timeoutMs: GIT_NETWORK_TIMEOUT_MS });
      await fs.promises.rename(tmp, bare);
    } catch (err) {
      await fs.promises.rm(tmp, { recursive: true, force: true });
      throw err;
    }
    this.log.info(`cloned ${source} into ${bare}`);
    return bare;
  }

  /**
   * Each source branch → the local branch of the same name: created when missing, fast-forwarded
   * when the local one is behind, and left alone when it has commits the source lacks (an approved
   * merge the source has not received yet: overwriting it would undo a person's decision).
   */
  private async syncLocalBranches(bare: string, repoId: string): Promise<void> {
    const refs = await git(['for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/remotes/origin'], { cwd: bare, what: 'for-each-ref' });
    const local = new Map<string, string>();
    const remote = new Map<string, string>();
    for (const line of refs.split('\n')) {
      const [name, sha] = line.split(' ');
      if (!name || !sha) continue;
      if (name.startsWith('refs/heads/')) local.set(name.slice('refs/heads/'.length), sha);
      else if (name !== 'refs/remotes/origin/HEAD') remote.set(name.slice('refs/remotes/origin/'.length), sha);
    }
    for (const [branch, sha] of remote) {
      if (branch.startsWith(AGENT_BRANCH_PREFIX)) continue;
      const mine = local.get(branch);
      if (mine === sha) continue;
      if (mine !== undefined) {
        const behind = await git(['merge-base', '--is-ancestor', mine, sha], { cwd: bare, what: 'merge-base' }).then(
          () => true,
          () => false,
        );
        if (!behind) {
          this.log.info(`repository ${repoId}: local ${branch} has commits the source lacks; kept (the source's is origin/${branch})`);
          continue;
        }
      }
      // Compare-and-swap: a merge landing meanwhile is never overwritten.
      await git(['update-ref', `refs/heads/${branch}`, sha, mine ?? ''], { cwd: bare, what: 'update-ref' }).catch((err) =>
        this.log.warn(`repository ${repoId}: could not move ${branch} to the source's ${sha.slice(0, 12)}: ${errorMessage(err)}`),
      );
    }
  }

  private async isBareRepo(dir: string): Promise<boolean> {
    if (!fs.existsSync(dir)) return false;
    const out = await git(['rev-parse', '--is-bare-repository'], { cwd: dir, what: 'rev-parse' }).catch(() => '');
    return out.trim() === 'true';
  }

  private async resolveCheckout(bare: string, checkout: PrepareWorktreeInput['checkout']): Promise<string> {
    let rev: string;
    if (checkout.type === 'branch') {
      if (checkout.ref.startsWith('-') || /[\s~^:?*[\\]/.test(checkout.ref)) throw new RunnerError('BAD_REQUEST', `invalid branch name "${checkout.ref}"`);
      rev = `refs/heads/${checkout.ref.replace(/^refs\/heads\//, '')}`;
    } else {
      if (!/^[0-9a-f]{4,64}$/i.test(checkout.ref)) throw new RunnerError('BAD_REQUEST', `checkout commit must be a hex sha, got "${checkout.ref}"`);
      rev = checkout.ref;
    }
    const sha = (await git(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { cwd: bare, what: 'rev-parse' }).catch(() => '')).trim();
    if (!sha) throw new RunnerError('BAD_REQUEST', checkout.type === 'branch' ? `branch "${checkout.ref}" not found in the repository` : `commit ${checkout.ref} not found in the repository`);
    return sha;
  }

  /** A worktree's `.git` file names `<bare>/worktrees/<name>`; used when the runner did not create it. */
  private bareOfWorktree(wt: string): string | null {
    try {
      const m = /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(path.join(wt, '.git'), 'utf8'));
      if (!m) return null;
      const bare = path.resolve(m[1].trim(), '..', '..');
      return bare.startsWith(this.reposDir + path.sep) ? bare : null;
    } catch {
      return null;
    }
  }

  private withRepoLock<T>(repoId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.repoLocks.get(repoId) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.repoLocks.set(repoId, tail);
    void tail.then(() => {
      if (this.repoLocks.get(repoId) === tail) this.repoLocks.delete(repoId);
    });
    return run;
  }
}

/** Parses `git ls-tree -r -z` output into the sorted directory list of a RepoTree. */
export function countDirs(listing: string): { dirs: RepoDir[]; truncated: boolean } {
  const counts = new Map<string, number>([['', 0]]);
  const addDir = (dir: string) => {
    // Every ancestor is a directory too, even when it holds no file directly.
    let d = dir;
    while (d !== '' && !counts.has(d)) {
      counts.set(d, 0);
      const slash = d.lastIndexOf('/');
      d = slash < 0 ? '' : d.slice(0, slash);
    }
  };
  for (const entry of listing.split('\0')) {
    if (!entry) continue;
    const tab = entry.indexOf('\t');
    if (tab < 0) continue;
    const type = entry.slice(0, tab).split(' ')[1];
    const file = entry.slice(tab + 1);
    const slash = file.lastIndexOf('/');
    const parent = slash < 0 ? '' : file.slice(0, slash);
    addDir(parent);
    if (type === 'commit') {
      // A submodule is a directory in the checkout; its files live in another repository.
      addDir(file);
      continue;
    }
    counts.set(parent, (counts.get(parent) ?? 0) + 1);
  }
  const dirs = [...counts.entries()]
    .map(([p, files]) => ({ path: p, files }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const truncated = dirs.length > MAX_SCAN_DIRS;
  return { dirs: truncated ? dirs.slice(0, MAX_SCAN_DIRS) : dirs, truncated };
}

export { GitError };
