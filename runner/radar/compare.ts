import { RADAR_LIMITS, RadarCompareCommandSchema, ok, parseInput, type MergeConflict, type RadarCompareResult, type Result } from '../../protocol';
import { RunnerError, failureFrom } from '../errors';
import type { Logger } from '../log';
import { runGit as run, snapshotWorktree } from '../workspace/snapshot';
import { hunksOverlap, parseConflictMarkers, parseMergeTree, parseUnifiedDiff } from './parse';

/** Hunks of each side against the merge base, for the given files. */
async function hunksOf(cwd: string, base: string, a: string, b: string, paths: string[]): Promise<RadarCompareResult['files']> {
  if (paths.length === 0) return [];
  const diff = (side: string) =>
    run(['diff', '-U0', '--no-color', '--no-ext-diff', '--no-textconv', '--no-renames', base, side, '--', ...paths], cwd).then((r) => parseUnifiedDiff(r.stdout));
  const [da, db] = await Promise.all([diff(a), diff(b)]);
  return paths.map((p) => {
    const ha = da.get(p) ?? [];
    const hb = db.get(p) ?? [];
    return { path: p, a: ha, b: hb, overlapping: hunksOverlap(ha, hb) };
  });
}

/** `git merge-tree --write-tree` of the two snapshots: clean, or which files and regions conflict. */
async function mergePreview(cwd: string, base: string, a: string, b: string): Promise<NonNullable<RadarCompareResult['merge']>> {
  const res = await run(['merge-tree', '--write-tree', '-z', '--name-only', a, b], cwd, {}, [0, 1]);
  const parsed = parseMergeTree(res.stdout);
  const conflicts: MergeConflict[] = [];
  for (const [file, kind] of [...parsed.conflicts].slice(0, RADAR_LIMITS.MAX_CONFLICTS)) {
    // A modify/delete leaves the surviving side's file without markers, or no file at all.
    const text = await run(['cat-file', 'blob', `${parsed.tree}:${file}`], cwd, {}, [0, 128]).then((r) => (r.code === 0 ? r.stdout : ''));
    conflicts.push({ path: file, kind, regions: parseConflictMarkers(text) });
  }
  return { clean: res.code === 0, merge_base: base, a_commit: a, b_commit: b, conflicts };
}

export interface RadarDeps {
  /** The worktree of a live session of this runner, or null. */
  worktreeOf(sessionId: string): string | null;
  log: Logger;
}

/** The `radar:compare` command: snapshot both worktrees, diff each against their merge base, optionally merge. */
export async function radarCompare(raw: unknown, deps: RadarDeps): Promise<Result<RadarCompareResult>> {
  const cmd = parseInput(RadarCompareCommandSchema, raw);
  if (!cmd.ok) return cmd;
  const { session_a, session_b, paths, merge } = cmd.data;
  try {
    const wa = deps.worktreeOf(session_a);
    const wb = deps.worktreeOf(session_b);
    const missing = [wa ? null : session_a, wb ? null : session_b].filter(Boolean);
    if (missing.length > 0 || !wa || !wb) throw new RunnerError('NOT_FOUND', `no live worktree on this runner for ${missing.join(' and ')}`);
    const [a, b] = await Promise.all([snapshotWorktree(wa, session_a), snapshotWorktree(wb, session_b)]);
    // Both worktrees share one bare clone's objects, so either can name both snapshots.
    const mb = await run(['merge-base', a, b], wa, {}, [0, 1]);
    const base = mb.stdout.trim();
    if (!base) throw new RunnerError('CONFLICT', 'the two sessions share no history (different repositories?)');
    const files = await hunksOf(wa, base, a, b, paths);
    return ok({ files, merge: merge ? await mergePreview(wa, base, a, b) : null });
  } catch (err) {
    return failureFrom(err, deps.log, 'radar:compare');
  }
}
