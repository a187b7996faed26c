import fs from 'node:fs';
import path from 'node:path';
import { errorMessage, type Logger } from '../log';

/** Editors and agents write a file in bursts (truncate, write, rename); one report per burst. */
export const WATCH_DEBOUNCE_MS = 150;
/**
 * Each watched directory costs one inotify watch (the default per-user limit is 8 192 on many
 * systems, shared with everything else); beyond this a huge tree is only partly watched.
 */
export const WATCH_MAX_DIRS = 4_000;
/** Never watched: git's own bookkeeping and dependency trees (hundreds of thousands of files). */
export const WATCH_IGNORED_NAMES: ReadonlySet<string> = new Set(['.git', 'node_modules']);

export type WatchChange = { path: string; exists: boolean };

export function isIgnoredPath(rel: string): boolean {
  return rel.split('/').some((seg) => WATCH_IGNORED_NAMES.has(seg));
}

/**
 * Watches a worktree for changed files: one non-recursive fs.watch per directory (Node's
 * recursive mode on Linux cannot skip node_modules and watches every directory in it), new
 * directories are picked up as they appear. Reports paths relative to the root, "/"-separated,
 * after WATCH_DEBOUNCE_MS of quiet per burst. Directories themselves are not reported.
 */
export class WorktreeWatcher {
  private readonly watchers = new Map<string, fs.FSWatcher>();
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private limitLogged = false;

  constructor(
    readonly root: string,
    private readonly onChanges: (changes: WatchChange[]) => void,
    private readonly log: Logger,
    private readonly debounceMs = WATCH_DEBOUNCE_MS,
    private readonly maxDirs = WATCH_MAX_DIRS,
  ) {}

  get watchedDirs(): number {
    return this.watchers.size;
  }

  /** Watches the tree as it is now; files already there are not reported. */
  start(): void {
    this.watchTree('', false);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    this.pending.clear();
  }

  /** Reports what is pending now instead of after the debounce (the session is ending). */
  flushNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.flush();
  }

  private watchDir(rel: string): boolean {
    if (this.closed || this.watchers.has(rel)) return false;
    if (this.watchers.size >= this.maxDirs) {
      if (!this.limitLogged) this.log.warn(`watching only ${this.maxDirs} directories of ${this.root}; changes deeper in are not seen`);
      this.limitLogged = true;
      return false;
    }
    try {
      const w = fs.watch(path.join(this.root, rel), { persistent: false }, (_event, filename) => {
        if (filename === null || filename === undefined) return;
        this.queue(rel ? `${rel}/${filename.toString()}` : filename.toString());
      });
      w.on('error', () => {
        // The directory went away (deleted or renamed): its parent reports that.
        w.close();
        if (this.watchers.get(rel) === w) this.watchers.delete(rel);
      });
      this.watchers.set(rel, w);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') this.log.warn(`cannot watch ${path.join(this.root, rel)}: ${errorMessage(err)}`);
      return false;
    }
  }

  /** Watches `rel` and every directory below it; with `report`, queues the files found (a directory that just appeared). */
  private watchTree(rel: string, report: boolean): void {
    const stack = [rel];
    while (stack.length > 0 && !this.closed) {
      const dir = stack.pop()!;
      if (!this.watchDir(dir) && dir !== rel) continue;
      let entries: fs.Dirent[];
      try {
        entries = fs.readdirSync(path.join(this.root, dir), { withFileTypes: true });
      } catch {
        continue;
      }
      for (const e of entries) {
        const child = dir ? `${dir}/${e.name}` : e.name;
        if (WATCH_IGNORED_NAMES.has(e.name)) continue;
        if (e.isDirectory()) stack.push(child);
        else if (report) this.pending.add(child);
      }
    }
  }

  private queue(rel: string): void {
    if (this.closed || isIgnoredPath(rel)) return;
    this.pending.add(rel);
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, this.debounceMs);
  }

  private flush(): void {
    if (this.closed || this.pending.size === 0) return;
    const changes: WatchChange[] = [];
    const paths = [...this.pending];
    this.pending.clear();
    for (const rel of paths) {
      let st: fs.Stats | null = null;
      try {
        st = fs.lstatSync(path.join(this.root, rel));
      } catch {
        st = null;
      }
      if (st?.isDirectory()) {
        // A new directory: watch it, and report what was written into it before the watch began.
        this.watchTree(rel, true);
        continue;
      }
      if (!st && this.watchers.has(rel)) {
        // A watched directory is gone: forget it and everything under it (its files were reported by its own watch).
        for (const [dir, w] of this.watchers) {
          if (dir === rel || dir.startsWith(`${rel}/`)) {
            w.close();
            this.watchers.delete(dir);
          }
        }
        continue;
      }
      changes.push({ path: rel, exists: st !== null });
    }
    // Files found in new directories were added to pending during the loop.
    for (const rel of this.pending) if (!paths.includes(rel)) changes.push({ path: rel, exists: true });
    this.pending.clear();
    if (changes.length === 0) return;
    try {
      this.onChanges(changes);
    } catch (err) {
      this.log.error('handling file changes failed', err);
    }
  }
}
