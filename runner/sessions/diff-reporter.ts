import fs from 'node:fs';
import path from 'node:path';
import type { RunnerEventBody } from '../../protocol';
import { StrictWatch } from '../dta/strict-watch';
import { errorMessage, type Logger } from '../log';
import type { PathGuard } from '../policy/paths';
import { isIgnoredPath, WorktreeWatcher, type WatchChange } from '../watch/worktree-watcher';
import { computeDiff, revertPath } from '../workspace/diff';
import { sessionPatch } from '../workspace/session-patch';
import type { PreparedWorktree } from '../workspace/workspace-manager';
import { WIRE_LIMITS } from '../../protocol';

/** DIFF_SUMMARY runs git at most this often while files keep changing (git diff of a big tree is not free). */
export const DIFF_MIN_INTERVAL_MS = 3_000;
/** The same file reported by hooks and the watcher (or written again and again) is one FILE_TOUCHED per this window. */
export const FILE_TOUCHED_DEDUPE_MS = 2_000;
/** How many entries the dedupe map holds before old ones are dropped (it must not grow with the session). */
const FILE_TOUCHED_DEDUPE_MAX_KEYS = 2_000;
/**
 * inotify events are read by the event loop, not when the write happens: a program that writes and
 * exits at once may end before its last write was seen. The final flush waits this long first.
 */
const FINAL_WATCH_SETTLE_MS = 50;

export type FileTouchReason = 'write' | 'read' | 'diff';

export interface DiffReporterOptions {
  worktree: () => PreparedWorktree | null;
  readOnly: boolean;
  paths: PathGuard;
  emit: (body: RunnerEventBody) => void;
  log: Logger;
  sessionId: string;
  /** The session has ended: nothing more is reported. */
  finished: () => boolean;
  /** A file counted for usage (files_touched). */
  counted: (rel: string) => void;
  /** A touch reported by anyone but the watcher is activity. */
  activity: () => void;
  diffIntervalMs?: number;
  fileTouchedDedupeMs?: number;
  watchDebounceMs?: number;
  /** Strict tools: hand edits a DTA covers that got past the hooks are reverted (runner/dta/strict-watch.ts). */
  strictTools?: boolean;
}

/**
 * What a session did to its files: the worktree watcher, FILE_TOUCHED (deduplicated across hooks
 * and the watcher), detect-and-revert for read-only sessions and path guards, and DIFF_SUMMARY
 * (interim while files change, one final at the end).
 */
export class DiffReporter {
  private watcher: WorktreeWatcher | null = null;
  /** `reason\0path` → when it was last reported. */
  private readonly touched = new Map<string, number>();
  /** What the last DIFF_SUMMARY said; a clean worktree needs no event. */
  private lastDiff = '[]';
  private diffDirty = false;
  private diffTimer: NodeJS.Timeout | null = null;
  private diffRunning: Promise<void> | null = null;
  private lastDiffAt = 0;
  /** Set once the final summary is being made; no interim one may follow it. */
  private diffClosed = false;
  /** Reverts run one after the other. */
  private reverts: Promise<void> = Promise.resolve();
  private strictWatch: StrictWatch | null = null;

  constructor(private readonly o: DiffReporterOptions) {}

  /** Watching starts before the process, so not even its first write goes unseen. */
  startWatching(): void {
    const wt = this.o.worktree();
    if (!wt || this.watcher) return;
    if (this.o.strictTools && !this.o.readOnly) this.strictWatch = new StrictWatch({ worktree: wt.path, baseSha: wt.sha, emit: this.o.emit, log: this.o.log });
    this.watcher = new WorktreeWatcher(wt.path, (changes) => this.onWatchChanges(changes), this.o.log, this.o.watchDebounceMs);
    this.watcher.start();
  }

  /** The strict-tools reviewer once watching started (null without strict tools). */
  get strict(): StrictWatch | null {
    return this.strictWatch;
  }

  /**
   * The one way to report FILE_TOUCHED (provider hooks and the file watcher both use it): `file`
   * is relative to the worktree or absolute inside it. The same (reason, file) within
   * FILE_TOUCHED_DEDUPE_MS is reported once, whoever noticed it. Returns whether it emitted.
   */
  noteFileTouched(file: string, reason: FileTouchReason, source: string): boolean {
    const wt = this.o.worktree()?.path;
    if (!wt || this.o.finished()) return false;
    let rel = path.isAbsolute(file) ? path.relative(wt, file) : file;
    rel = path.posix.normalize(rel.split(path.sep).join('/')).replace(/^(\.\/)+/, '').replace(/\/+$/, '');
    if (!rel || rel === '.' || rel === '..' || rel.startsWith('../') || path.posix.isAbsolute(rel)) return false;
    if (rel.split('/').includes('.git')) return false;
    const now = Date.now();
    const window = this.o.fileTouchedDedupeMs ?? FILE_TOUCHED_DEDUPE_MS;
    const key = `${reason}\0${rel}`;
    const last = this.touched.get(key);
    if (last !== undefined && now - last < window) return false;
    if (this.touched.size >= FILE_TOUCHED_DEDUPE_MAX_KEYS) {
      for (const [k, t] of this.touched) if (now - t >= window) this.touched.delete(k);
    }
    this.touched.set(key, now);
    const dir = path.posix.dirname(rel);
    this.o.emit({ type: 'FILE_TOUCHED', path: rel.slice(0, WIRE_LIMITS.PATH), room_path: dir === '.' ? '' : dir, reason });
    this.o.counted(rel);
    if (reason === 'write') this.markDiffDirty();
    if (source !== 'watcher') this.o.activity();
    return true;
  }

  private onWatchChanges(changes: WatchChange[]): void {
    if (this.o.finished()) return;
    if (this.o.readOnly) return this.revertWrites(changes);
    const paths = this.o.paths;
    const guarded = paths.active ? changes.filter((c) => paths.violation(c.path) !== null) : [];
    if (guarded.length) this.revertForbidden(guarded);
    const strict = this.strictWatch;
    if (strict) {
      const review = changes.filter((c) => !isIgnoredPath(c.path) && !guarded.includes(c));
      this.reverts = this.reverts.then(() => strict.review(review));
    }
    for (const c of changes) if (!isIgnoredPath(c.path) && !guarded.includes(c)) this.noteFileTouched(c.path, 'write', 'watcher');
    this.markDiffDirty();
  }

  /** Detect-and-revert for path guards where prevention was not possible (new files, no namespace). */
  private revertForbidden(changes: WatchChange[]): void {
    const wt = this.o.worktree();
    if (!wt) return;
    this.reverts = this.reverts.then(async () => {
      for (const c of changes) {
        const rule = this.o.paths.violation(c.path) ?? 'path guard';
        try {
          if (!(await revertPath(wt.path, wt.sha, c.path))) continue;
          this.o.log.warn(`session ${this.o.sessionId}: write to ${c.path} broke ${rule}; reverted`);
          this.o.emit({ type: 'POLICY_BLOCKED', path: c.path.slice(0, WIRE_LIMITS.PATH), rule, detail: `write to ${c.path} reverted to the base commit`, outcome: 'reverted' });
        } catch (err) {
          this.o.emit({ type: 'ALERT_RAISED', severity: 'error', message: `write to ${c.path} broke ${rule}; could not revert it: ${errorMessage(err)}`.slice(0, WIRE_LIMITS.MESSAGE) });
        }
      }
    });
  }

  /** Detect-and-revert for read-only sessions (the fallback where the read-only mount is not possible). */
  private revertWrites(changes: WatchChange[]): void {
    const wt = this.o.worktree();
    if (!wt) return;
    this.reverts = this.reverts.then(async () => {
      for (const c of changes) {
        const dir = path.posix.dirname(c.path);
        const room_path = dir === '.' ? '' : dir;
        try {
          if (!(await revertPath(wt.path, wt.sha, c.path))) continue;
          this.o.log.warn(`session ${this.o.sessionId}: read-only session wrote ${c.path}; reverted`);
          this.o.emit({ type: 'ALERT_RAISED', severity: 'warning', message: `read-only session wrote ${c.path}; reverted`.slice(0, WIRE_LIMITS.MESSAGE), room_path });
        } catch (err) {
          this.o.emit({
            type: 'ALERT_RAISED',
            severity: 'error',
            message: `read-only session wrote ${c.path}; could not revert it: ${errorMessage(err)}`.slice(0, WIRE_LIMITS.MESSAGE),
            room_path,
          });
        }
      }
    });
  }

  private markDiffDirty(): void {
    this.diffDirty = true;
    if (this.diffClosed || this.diffTimer || this.diffRunning) return;
    const interval = this.o.diffIntervalMs ?? DIFF_MIN_INTERVAL_MS;
    this.diffTimer = setTimeout(
      () => {
        this.diffTimer = null;
        this.runDiff();
      },
      Math.max(0, this.lastDiffAt + interval - Date.now()),
    );
  }

  private runDiff(): void {
    const wt = this.o.worktree();
    if (!wt || this.diffClosed) return;
    this.diffDirty = false;
    this.lastDiffAt = Date.now();
    this.diffRunning = computeDiff(wt.path, wt.sha)
      .then((files) => {
        const json = JSON.stringify(files);
        if (this.diffClosed || json === this.lastDiff) return;
        this.lastDiff = json;
        this.o.emit({ type: 'DIFF_SUMMARY', files, final: false });
      })
      .catch((err) => this.o.log.warn(`diff of ${this.o.sessionId} failed: ${errorMessage(err)}`))
      .finally(() => {
        this.diffRunning = null;
        if (this.diffDirty) this.markDiffDirty();
      });
  }

  /** Last changes seen, then one DIFF_SUMMARY with final=true (`processRan`: only for a session whose process ran). */
  async finalDiff(processRan: boolean): Promise<void> {
    if (this.watcher) await new Promise((r) => setTimeout(r, FINAL_WATCH_SETTLE_MS));
    this.watcher?.flushNow();
    this.watcher?.close();
    this.watcher = null;
    this.diffClosed = true;
    if (this.diffTimer) clearTimeout(this.diffTimer);
    this.diffTimer = null;
    await this.diffRunning;
    await this.reverts;
    const wt = this.o.worktree();
    if (!wt || !processRan || !fs.existsSync(wt.path)) return;
    const files = await computeDiff(wt.path, wt.sha);
    this.lastDiff = JSON.stringify(files);
    // The worktree is removed after this: its story keeps the diff itself (runner/workspace/session-patch.ts).
    const patch = files.length > 0 ? await sessionPatch(wt.path, wt.sha).catch((err) => (this.o.log.warn(`patch of ${this.o.sessionId} failed: ${errorMessage(err)}`), undefined)) : undefined;
    this.o.emit({ type: 'DIFF_SUMMARY', files, final: true, ...(patch !== undefined ? { patch } : {}) });
  }
}
