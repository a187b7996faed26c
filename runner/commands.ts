import fs from 'node:fs';
import {
  ApproveCommandSchema,
  DeliverRunResultCommandSchema,
  StartRunCommandSchema,
  CreateSessionCommandSchema,
  RepoInspectCommandSchema,
  RepoScanCommandSchema,
  SessionInputCommandSchema,
  SessionPauseCommandSchema,
  SessionRefSchema,
  SessionResizeCommandSchema,
  TerminalAckSchema,
  fail,
  ok,
  parseInput,
  type PatrolDefaults,
  type RepoTree,
  type Result,
} from '../protocol';
import { failureFrom } from './errors';
import type { Logger } from './log';
import type { DtaRunService } from './dta/run-service';
import type { WorkItemService } from './workitems/service';
import type { RunManager } from './runs/run-manager';
import type { SessionManager } from './sessions/session-manager';
import { echoTrace, wallNow } from './sessions/echo-trace';
import { REPO_ACCESS_DENIED } from '../common/repo-access';
import { radarCompare, type RadarDeps } from './radar/compare';
import { radarExport, radarHistory } from './radar/export';
import { git } from './workspace/git';
import type { WorkspaceManager } from './workspace/workspace-manager';

export interface CommandDeps {
  sessions: SessionManager;
  workspaces: WorkspaceManager;
  log: Logger;
  /** --repo-access: whether this runner may clone from a source. Defaults to any. */
  canReach?: (source: string) => boolean;
  /** Deterministic runs; without it, run:start is refused (tests that only need sessions). */
  runs?: RunManager;
  /** DTA runs; without it, dta:start is refused. */
  dta?: DtaRunService;
  /** Quest steps as work items; without it, workitem:* is refused. */
  workItems?: WorkItemService;
}

/**
 * Control plane → runner commands. Each takes the raw payload, validates it with the protocol
 * schema (a malformed one is answered BAD_REQUEST and changes nothing) and answers a Result.
 */
export function createCommandHandlers({ sessions, workspaces, log, canReach = () => true, runs, dta, workItems }: CommandDeps) {
  const radarDeps: RadarDeps = {
    log,
    worktreeOf: (id) => sessions.get(id)?.worktree?.path ?? null,
    repoDir: (repoId) => (fs.existsSync(workspaces.barePath(repoId)) ? workspaces.barePath(repoId) : null),
    // Fetched from where it was cloned from, under the clone's lock like every other fetch.
    refreshClone: async (repoId) => {
      const origin = (await git(['config', '--get', 'remote.origin.url'], { cwd: workspaces.barePath(repoId), what: 'config' }).catch(() => '')).trim();
      if (origin && canReach(origin)) await workspaces.ensureClone(repoId, origin);
    },
  };
  return {
    'session:create': (raw: unknown): Result<{ session_id: string }> => {
      const cmd = parseInput(CreateSessionCommandSchema, raw);
      if (!cmd.ok) return cmd;
      if (!canReach(cmd.data.repo_source)) return fail('FORBIDDEN', REPO_ACCESS_DENIED);
      return sessions.create(cmd.data);
    },
    'session:input': (raw: unknown): Result<null> => {
      const at = echoTrace ? wallNow() : 0;
      const cmd = parseInput(SessionInputCommandSchema, raw);
      if (!cmd.ok) return cmd;
      echoTrace?.received(cmd.data.session_id, cmd.data.data, at);
      return sessions.input(cmd.data);
    },
    'session:resize': (raw: unknown): Result<null> => {
      const cmd = parseInput(SessionResizeCommandSchema, raw);
      return cmd.ok ? sessions.resize(cmd.data) : cmd;
    },
    'session:stop': (raw: unknown): Result<null> => {
      const cmd = parseInput(SessionRefSchema, raw);
      return cmd.ok ? sessions.stop(cmd.data) : cmd;
    },
    'session:pause': (raw: unknown): Result<null> => {
      const cmd = parseInput(SessionPauseCommandSchema, raw);
      return cmd.ok ? sessions.pause(cmd.data, cmd.data.reason) : cmd;
    },
    'session:resume': (raw: unknown): Result<null> => {
      const cmd = parseInput(SessionRefSchema, raw);
      return cmd.ok ? sessions.resume(cmd.data) : cmd;
    },
    'session:approve': (raw: unknown): Result<null> => {
      const cmd = parseInput(ApproveCommandSchema, raw);
      return cmd.ok ? sessions.approve(cmd.data) : cmd;
    },
    /** Run one of this runner's blueprints (only its own: anything else is NOT_FOUND). */
    'run:start': (raw: unknown): Result<{ run_id: string }> => {
      const cmd = parseInput(StartRunCommandSchema, raw);
      if (!cmd.ok) return cmd;
      if (!runs) return fail('NOT_FOUND', 'this runner runs no deterministic agents');
      return runs.start(cmd.data);
    },
    /** A DTA run: dry-run in a fresh worktree, then wait for dta:decide (runner/dta/run-service.ts). */
    'dta:start': (raw: unknown): Result<{ run_id: string }> => (dta ? dta.start(raw) : fail('NOT_FOUND', 'this runner runs no DTAs')),
    'dta:decide': (raw: unknown): Result<null> => (dta ? dta.decide(raw) : fail('NOT_FOUND', 'this runner runs no DTAs')),
    /** A quest step as a work item (runner/workitems/service.ts): accepted now, the outcome as a QUEST_STEP update. */
    'workitem:run': (raw: unknown): Result<{ accepted: true }> => (workItems ? workItems.run(raw) : fail('NOT_FOUND', 'this runner runs no quest steps')),
    /** A DAG level of a quest: its steps in parallel worktrees, merged in step id order. */
    'workitem:run-level': (raw: unknown): Result<{ accepted: true }> => (workItems ? workItems.runLevel(raw) : fail('NOT_FOUND', 'this runner runs no quest steps')),
    'workitem:replay': (raw: unknown): Result<{ accepted: true }> => (workItems ? workItems.replay(raw) : fail('NOT_FOUND', 'this runner runs no quest steps')),
    /** A run whose parent is one of our sessions finished: into its stream and its inbox. */
    'session:run_result': (raw: unknown): Promise<Result<{ inbox_path: string | null }>> | Result<never> => {
      const cmd = parseInput(DeliverRunResultCommandSchema, raw);
      return cmd.ok ? sessions.deliverRunResult(cmd.data) : cmd;
    },
    /** Conflict radar: two sides' hunks and their merge preview (runner/radar/compare.ts); across runners, export.ts. */
    'radar:compare': (raw: unknown) => radarCompare(raw, radarDeps),
    'radar:history': (raw: unknown) => radarHistory(raw, radarDeps),
    'radar:export': (raw: unknown) => radarExport(raw, radarDeps),
    /** Fire-and-forget from the server: a bad one is only logged. */
    'terminal:ack': (raw: unknown): void => {
      const cmd = parseInput(TerminalAckSchema, raw);
      if (cmd.ok) sessions.terminalAck(cmd.data);
      else log.warn(`ignored terminal:ack: ${cmd.error.message}`);
    },
    'repo:scan': async (raw: unknown): Promise<Result<RepoTree>> => {
      const cmd = parseInput(RepoScanCommandSchema, raw);
      if (!cmd.ok) return cmd;
      if (!canReach(cmd.data.source)) return fail('FORBIDDEN', REPO_ACCESS_DENIED);
      try {
        return ok(await workspaces.scan(cmd.data.repo_id, cmd.data.source));
      } catch (err) {
        return failureFrom(err, log, `repo:scan of ${cmd.data.repo_id}`);
      }
    },
    'repo:inspect': async (raw: unknown): Promise<Result<PatrolDefaults>> => {
      const cmd = parseInput(RepoInspectCommandSchema, raw);
      if (!cmd.ok) return cmd;
      if (!canReach(cmd.data.source)) return fail('FORBIDDEN', REPO_ACCESS_DENIED);
      try {
        return ok(await workspaces.inspect(cmd.data.repo_id, cmd.data.source));
      } catch (err) {
        return failureFrom(err, log, `repo:inspect of ${cmd.data.repo_id}`);
      }
    },
  };
}

export type CommandHandlers = ReturnType<typeof createCommandHandlers>;
