import fs from 'node:fs';
import path from 'node:path';
import type { RunnerEventBody } from '../../protocol';
import { errorMessage, type Logger } from '../log';
import { git } from '../workspace/git';
import { realDir, topLevel } from './git-state';
import { dtaForEdit, inStrictDomain, strictRefusal } from './strict-tools';

/** Files bigger than this are not classified (the classifiers parse the whole text twice). */
export const STRICT_WATCH_MAX_BYTES = 2 * 1024 * 1024;

export interface StrictWatchOptions {
  worktree: string;
  /** The commit the worktree started from: the first "before" of a file nobody wrote yet. */
  baseSha: string;
  emit: (body: RunnerEventBody) => void;
  log: Logger;
}

/**
 * Strict tools, second line: the provider hooks refuse a hand edit a DTA covers, but a shell
 * (`sed -i`, a script) gets past them. The worktree watcher hands every change here; a change
 * that is exactly what a DTA does is put back to the file's last accepted text and reported as
 * POLICY_BLOCKED (rule strict_tools, outcome reverted, the DTA named). Every other change becomes
 * the file's new accepted text, so free edits are never undone. The DTA runs of the session
 * itself (av-dta through the runner) are accepted through `runningDta` / `accept`.
 */
export class StrictWatch {
  /** rel → the text last accepted (free edits, DTA applies, the base commit). */
  private readonly accepted = new Map<string, string>();
  /** While the session's own DTA run writes the tree, its changes are not the agent's. */
  private dtaRuns = 0;

  constructor(private readonly o: StrictWatchOptions) {}

  /**
   * Wraps one av-dta run of this session: its writes are accepted, not reverted. `repoDir` is the
   * run's target inside the worktree (the agent's cwd, often a room below the top level). The run's
   * `files` are relative to the git top level of `repoDir` (as the engine reports them), not to
   * `repoDir` itself: taking them as relative to a room named files that do not exist, so nothing
   * was accepted, and a watcher batch arriving after a fast run reverted the DTA's own apply.
   */
  async runningDta<T extends { files?: string[] }>(repoDir: string, run: () => Promise<T>): Promise<T> {
    this.dtaRuns++;
    try {
      const out = await run();
      const root = await topLevel(repoDir).catch(() => null);
      if (root !== null) {
        const prefix = path.relative(realDir(this.o.worktree), root).split(path.sep).join('/');
        await this.accept((out.files ?? []).map((f) => (prefix ? `${prefix}/${f}` : f)));
      }
      return out;
    } finally {
      this.dtaRuns--;
    }
  }

  /** The files as they are now become the accepted text. */
  async accept(files: string[]): Promise<void> {
    for (const rel of files) {
      const now = this.read(rel);
      if (now === null) this.accepted.delete(rel);
      else this.accepted.set(rel, now);
    }
  }

  /** Reviews one batch of watcher changes (worktree-relative, "/"-separated). */
  async review(changes: Array<{ path: string; exists: boolean }>): Promise<void> {
    for (const c of changes) {
      if (!c.exists || !inStrictDomain(c.path)) continue;
      try {
        await this.reviewOne(c.path);
      } catch (err) {
        this.o.log.warn(`strict tools: could not review ${c.path}: ${errorMessage(err)}`);
      }
    }
  }

  private async reviewOne(rel: string): Promise<void> {
    const base = this.accepted.has(rel) ? null : await this.atBase(rel);
    // From here to the revert nothing awaits: a DTA run of this session that wrote the file while
    // the base was read (its apply, its accept) is seen, and the file is judged as it is now. Read
    // before the await, a stale hand-edit text was once compared and the DTA's verified apply
    // overwritten with the base.
    const after = this.read(rel);
    if (after === null) return;
    if (this.dtaRuns > 0) {
      this.accepted.set(rel, after);
      return;
    }
    const before = this.accepted.get(rel) ?? base;
    if (before === null || before === after) {
      this.accepted.set(rel, after);
      return;
    }
    const tool = dtaForEdit(rel, before, after);
    if (!tool) {
      this.accepted.set(rel, after);
      return;
    }
    // Temp + rename: the agent's process never sees a half-written file.
    const abs = path.join(this.o.worktree, rel);
    const tmp = `${abs}.av-strict-${process.pid}`;
    const mode = fs.statSync(abs).mode;
    fs.writeFileSync(tmp, before, { mode });
    fs.renameSync(tmp, abs);
    this.accepted.set(rel, before);
    this.o.log.warn(`strict tools: a hand edit of ${rel} is the ${tool} DTA's; reverted`);
    this.o.emit({
      type: 'POLICY_BLOCKED',
      path: rel.slice(0, 4096),
      rule: 'strict_tools',
      dta_tool: tool,
      detail: `${strictRefusal(tool, rel)} (a change made outside the agent's edit tools was reverted)`.slice(0, 2000),
      outcome: 'reverted',
    });
  }

  private read(rel: string): string | null {
    const abs = path.join(this.o.worktree, rel);
    if (!abs.startsWith(this.o.worktree + path.sep)) return null;
    try {
      const st = fs.statSync(abs);
      if (!st.isFile() || st.size > STRICT_WATCH_MAX_BYTES) return null;
      return fs.readFileSync(abs, 'utf8');
    } catch {
      return null;
    }
  }

  /** The file at the worktree's base commit, or null when it is new. */
  private async atBase(rel: string): Promise<string | null> {
    return git(['show', `${this.o.baseSha}:${rel}`], { cwd: this.o.worktree, what: 'show' }).catch(() => null);
  }
}
