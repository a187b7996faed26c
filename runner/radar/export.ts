import {
  RADAR_PATCH_LIMITS,
  RadarExportCommandSchema,
  RadarHistoryCommandSchema,
  ok,
  parseInput,
  type RadarExportResult,
  type RadarHistoryResult,
  type Result,
} from '../../protocol';
import { RunnerError, failureFrom } from '../errors';
import { runGit as run, snapshotWorktree } from '../workspace/snapshot';
import { cloneOf, type RadarDeps } from './compare';
import { gitWithInput } from './git-input';

/**
 * The two halves of a merge preview across runners. The control plane asks the comparing runner
 * for its session's history (`radar:history`), then asks the other runner for its session's work
 * as a binary patch against the merge base with that history (`radar:export`), and sends the
 * patch back to the comparing runner as a `patch` side of `radar:compare`.
 */

function liveWorktree(sessionId: string, deps: RadarDeps): string {
  const wt = deps.worktreeOf(sessionId);
  if (!wt) throw new RunnerError('NOT_FOUND', `no live worktree on this runner for ${sessionId}`);
  return wt;
}

/** Where this runner's clone came from: the same repository has the same source on every runner. */
async function originOf(cwd: string): Promise<string> {
  return (await run(['config', '--get', 'remote.origin.url'], cwd, {}, [0, 1])).stdout.trim();
}

export async function radarHistory(raw: unknown, deps: RadarDeps): Promise<Result<RadarHistoryResult>> {
  const cmd = parseInput(RadarHistoryCommandSchema, raw);
  if (!cmd.ok) return cmd;
  try {
    const cwd = cloneOf(cmd.data.repo_id, deps);
    const wt = liveWorktree(cmd.data.session_id, deps);
    const log = await run(['rev-list', `--max-count=${RADAR_PATCH_LIMITS.MAX_HISTORY_COMMITS}`, 'HEAD'], wt);
    return ok({ origin: await originOf(cwd), commits: log.stdout.split('\n').filter(Boolean) });
  } catch (err) {
    return failureFrom(err, deps.log, 'radar:history');
  }
}

/** The newest of the other side's commits that this clone also has, or null. */
async function firstShared(cwd: string, candidates: string[]): Promise<string | null> {
  const r = await gitWithInput(['cat-file', '--batch-check=%(objectname) %(objecttype)'], cwd, `${candidates.join('\n')}\n`);
  if (r.code !== 0) throw new RunnerError('RUNNER_ERROR', `git cat-file failed: ${r.stderr.trim()}`);
  return r.stdout.split('\n').find((l) => l.endsWith(' commit'))?.split(' ')[0] ?? null;
}

export async function radarExport(raw: unknown, deps: RadarDeps): Promise<Result<RadarExportResult>> {
  const cmd = parseInput(RadarExportCommandSchema, raw);
  if (!cmd.ok) return cmd;
  const { repo_id, session_id, origin, candidates } = cmd.data;
  try {
    const cwd = cloneOf(repo_id, deps);
    const wt = liveWorktree(session_id, deps);
    const mine = await originOf(cwd);
    if (mine !== origin) {
      throw new RunnerError('CONFLICT', `the two runners do not hold the same repository: one cloned it from ${origin || '(unknown)'}, the other from ${mine || '(unknown)'}`);
    }
    const anchor = await firstShared(cwd, candidates);
    if (!anchor) throw new RunnerError('CONFLICT', `the two runners' clones share none of the other session's last ${candidates.length} commits: they do not hold the same history`);
    const snapshot = await snapshotWorktree(wt, session_id);
    const base = (await run(['merge-base', snapshot, anchor], cwd)).stdout.trim();
    const diff = await run(['diff', '--binary', '--no-color', '--no-ext-diff', '--no-textconv', '--no-renames', base, snapshot], cwd);
    const bytes = Buffer.byteLength(diff.stdout);
    if (bytes > RADAR_PATCH_LIMITS.MAX_REMOTE_PATCH_BYTES) {
      throw new RunnerError(
        'PAYLOAD_TOO_LARGE',
        `session ${session_id}'s work is ${(bytes / 1e6).toFixed(1)} MB as a patch, more than the ${(RADAR_PATCH_LIMITS.MAX_REMOTE_PATCH_BYTES / 1e6).toFixed(1)} MB a merge preview across runners carries`,
      );
    }
    return ok({ base, patch: diff.stdout });
  } catch (err) {
    return failureFrom(err, deps.log, 'radar:export');
  }
}
