import { RADAR_LIMITS, RadarCompareCommandSchema, ok, parseInput, type MergeConflict, type RadarCompareResult, type Result } from '../../protocol';
import { RunnerError, failureFrom } from '../errors';
import type { Logger } from '../log';
import { runGit as run } from '../workspace/snapshot';
import { hunksOverlap, parseConflictMarkers, parseMergeTree, parseUnifiedDiff } from './parse';
import { sideCommit, type SideDeps } from './sides';

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

export interface RadarDeps extends SideDeps {
  /** This runner's clone of the repository (where every side's objects live), or null when it has none. */
  repoDir(repoId: string): string | null;
  log: Logger;
}

/** The clone to work in, or a clear NOT_FOUND. */
export function cloneOf(repoId: string, deps: Pick<RadarDeps, 'repoDir'>): string {
  const dir = deps.repoDir(repoId);
  if (!dir) throw new RunnerError('NOT_FOUND', `this runner has no clone of repository ${repoId}`);
  return dir;
}

/**
 * The `radar:compare` command: each side as a commit (a live worktree's snapshot, or base + patch
 * for a DTA run's proposal or another runner's session), both diffed against their merge base,
 * and optionally merged with `git merge-tree`.
 */
export async function radarCompare(raw: unknown, deps: RadarDeps): Promise<Result<RadarCompareResult>> {
  const cmd = parseInput(RadarCompareCommandSchema, raw);
  if (!cmd.ok) return cmd;
  const { repo_id, paths, merge } = cmd.data;
  try {
    const cwd = cloneOf(repo_id, deps);
    // One after the other: a missing base may fetch the clone, which two sides must not do at once.
    const a = await sideCommit(cmd.data.a, repo_id, cwd, deps);
    const b = await sideCommit(cmd.data.b, repo_id, cwd, deps);
    const mb = await run(['merge-base', a, b], cwd, {}, [0, 1]);
    const base = mb.stdout.trim();
    if (!base) throw new RunnerError('CONFLICT', 'the two sides share no history (different repositories?)');
    const files = await hunksOf(cwd, base, a, b, paths);
    return ok({ files, merge: merge ? await mergePreview(cwd, base, a, b) : null });
  } catch (err) {
    return failureFrom(err, deps.log, 'radar:compare');
  }
}
