import { z } from 'zod';
import { ProviderInfoSchema } from './runner';
import type { ApprovalSummary } from './approvals';
import type { NotificationSummary } from './notifications';
import type { SpawnSessionBodySchema } from './api';
import type { AlertSummary, PatrolRunSummary, PatrolSummary, RepoHealth } from './patrols';
import type { AgentCatalog, RunSummary } from './deterministic';
import type { DtaRunUpdated } from './dta';
import type { QuestUpdated } from './quests';
import type { Ack } from './result';
import { ProviderIdSchema, RepoTreeSchema, SessionIdSchema, SessionStateSchema } from './world';
import type { TerminalClientToServerEvents, TerminalServerToClientEvents } from './terminal';
import type { TerminalLiveServerToClientEvents } from './terminal-live';

/** What the browser is told about a session. */
export const SessionSummarySchema = z.object({
  id: z.string(),
  repo_id: z.string(),
  runner_id: z.string().nullable(),
  provider: ProviderIdSchema,
  /** agent: a provider's CLI or a shell a person spawned; patrol: a repository check (read-only, no input). */
  kind: z.enum(['agent', 'patrol']),
  room_path: z.string(),
  title: z.string(),
  state: SessionStateSchema,
  reason: z.string(),
  created_by: z.string(),
  created_at: z.string(),
  last_seq: z.number().int(),
  mode: z.enum(['write', 'read_only']),
  /** What the agent is doing while RUNNING (from provider hooks or idle detection). */
  activity: z.enum(['working', 'waiting_for_input', 'idle']).nullable(),
  activity_detail: z.string(),
  activity_since: z.number().nullable(),
  /** The latest DIFF_SUMMARY: changed files with +/- line counts (null counts for binary files). */
  diff: z.array(z.object({ path: z.string(), added: z.number().int().nullable(), removed: z.number().int().nullable() })).nullable(),
  /** The latest test run seen in the session (running until TEST_RUN_FINISHED arrives). */
  tests: z
    .object({
      command: z.string(),
      running: z.boolean(),
      passed: z.number().int(),
      failed: z.number().int(),
      exit_code: z.number().int().nullable(),
    })
    .nullable(),
  /** Set while the session's runner is disconnected and within its grace period. */
  runner_lost: z.boolean(),
});
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

export const RepoSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  source: z.string(),
  status: z.enum(['pending', 'ready', 'error']),
  error: z.string().nullable(),
  default_branch: z.string().nullable(),
  head_sha: z.string().nullable(),
  tree: RepoTreeSchema.nullable(),
});
export type RepoSummary = z.infer<typeof RepoSummarySchema>;

export const RunnerSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  hostname: z.string(),
  online: z.boolean(),
  capacity: z.number().int(),
  providers: z.array(ProviderIdSchema),
  provider_versions: z.record(z.string(), z.string().nullable()),
  /** Per provider: version, the range its adapter was written for, whether the runner shares its sign-in file. */
  provider_info: z.array(ProviderInfoSchema).default([]),
  labels: z.array(z.string()),
  repo_access: z.array(z.string()),
  active_sessions: z.number().int(),
  event_loop_lag_ms: z.number().nullable(),
  rss_bytes: z.number().nullable(),
  last_seen_at: z.string(),
  /** For admins: someone else tried to connect with this runner's name and token (see the audit log). */
  security_alert: z.object({ message: z.string(), at: z.string() }).nullable().optional(),
});
export type RunnerSummary = z.infer<typeof RunnerSummarySchema>;

/** A stored runner event as the browser receives it (the payload is the validated runner event). */
export const WireEventSchema = z.object({
  seq: z.number().int().positive(),
  type: z.string(),
  ts: z.number(),
  data: z.string().optional(), // TERMINAL_CHUNK text
  payload: z.record(z.string(), z.unknown()).optional(), // every other event
});
export type WireEvent = z.infer<typeof WireEventSchema>;

export const AttachSchema = z.object({
  session_id: SessionIdSchema,
  after_seq: z.number().int().min(0).default(0),
  // true: start from the serialised screen (session:snapshot) instead of every stored event.
  snapshot: z.boolean().default(false),
  // true: live output comes as binary `terminal:output` frames (protocol/terminal-live.ts).
  binary: z.boolean().default(false),
});
export const DetachSchema = z.object({ session_id: SessionIdSchema });
export const UiInputSchema = z.object({ session_id: SessionIdSchema, data: z.string().min(1).max(65536) });
export const UiResizeSchema = z.object({
  session_id: SessionIdSchema,
  cols: z.number().int().min(2).max(1000),
  rows: z.number().int().min(2).max(500),
});
export const UiTerminalAckSchema = z.object({ session_id: SessionIdSchema, seq: z.number().int().min(0) });

export interface UiClientToServerEvents extends TerminalClientToServerEvents {
  'session:attach': (body: z.input<typeof AttachSchema>, ack: Ack<{ session: SessionSummary }>) => void;
  'session:detach': (body: z.infer<typeof DetachSchema>, ack?: Ack<null>) => void;
  'terminal:input': (body: z.infer<typeof UiInputSchema>, ack?: Ack<null>) => void;
  'terminal:resize': (body: z.infer<typeof UiResizeSchema>, ack?: Ack<null>) => void;
  'terminal:ack': (body: z.infer<typeof UiTerminalAckSchema>) => void;
  /** The same spawn as POST /api/sessions (same role, plan limits and answers), for socket clients. */
  'session:spawn': (body: z.input<typeof SpawnSessionBodySchema>, ack: Ack<SessionSummary>) => void;
}

export interface UiServerToClientEvents extends TerminalServerToClientEvents, TerminalLiveServerToClientEvents {
  /** Events of an attached session, in seq order; `replay` marks those read back from the database. */
  'session:events': (body: { session_id: string; events: WireEvent[]; replay: boolean }) => void;
  /** Replay is complete through this seq: live events follow, input may be enabled. */
  'session:replayed': (body: { session_id: string; through_seq: number }) => void;
  'session:updated': (session: SessionSummary) => void;
  'repo:updated': (repo: RepoSummary) => void;
  'runner:updated': (runner: RunnerSummary) => void;
  'approval:updated': (approval: ApprovalSummary) => void;
  /** A new inbox entry for this user (issue 19 item 2). */
  'notification:new': (notification: NotificationSummary) => void;
  /** An alert was raised, seen again or resolved (a bug sprite appears or leaves). */
  'alert:updated': (alert: AlertSummary) => void;
  /** A building's health changed (a patrol finished). */
  'health:updated': (health: RepoHealth) => void;
  'patrol:updated': (patrol: PatrolSummary) => void;
  'patrol-run:updated': (run: PatrolRunSummary) => void;
  /** A deterministic run changed (created, started, finished, its callback delivered). */
  'run:updated': (run: RunSummary) => void;
  /** A DTA run changed phase (DtaRunUpdatedSchema; the browser validates it on arrival). */
  'dta-run:updated': (run: DtaRunUpdated) => void;
  /** A quest or one of its steps changed state (QuestUpdatedSchema; the browser validates it on arrival). */
  'quest:updated': (quest: QuestUpdated) => void;
  /** The org's deterministic agents changed (a runner registered, reloaded its folder, or left). */
  'agents:updated': (catalog: AgentCatalog) => void;
}
