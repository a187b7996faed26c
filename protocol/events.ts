import { z } from 'zod';
import { BlastRadiusSchema } from './blast-radius';
import { DtaEventSchema, DtaToolSchema } from './dta';
import { MAX_ALERT_EXCERPT_CHARS, PatrolKindSchema } from './patrols';
import { OrgIdSchema, ProviderIdSchema, RepoRefSchema, RoomPathSchema, SessionIdSchema, SessionStateSchema } from './world';
import { WIRE_LIMITS } from './wire-limits';

/**
 * Runner → control plane events (agent-runner.md §7): UPPER_SNAKE type, snake_case fields, and on
 * every event org_id, repo_ref, ts (epoch ms) and seq (monotonic per session, from 1).
 */
/** A session story's diff is for reading; a bigger change is cut (its file list stays whole). */
export const STORY_PATCH_MAX_CHARS = 256 * 1024;

const base = {
  session_id: SessionIdSchema,
  org_id: OrgIdSchema,
  repo_id: z.string().min(1).max(100),
  repo_ref: RepoRefSchema,
  ts: z.number().int().nonnegative(),
  seq: z.number().int().positive(),
};

export const SessionStartedSchema = z.object({
  ...base,
  type: z.literal('SESSION_STARTED'),
  provider: ProviderIdSchema,
  room_path: RoomPathSchema,
  branch: z.string(),
  worktree_path: z.string(),
  pid: z.number().int().positive(),
});

export const SessionStateChangedSchema = z.object({
  ...base,
  type: z.literal('SESSION_STATE_CHANGED'),
  from: SessionStateSchema,
  to: SessionStateSchema,
  reason: z.string().max(WIRE_LIMITS.TEXT),
  exit_code: z.number().int().nullable().optional(),
});

export const TerminalChunkSchema = z.object({
  ...base,
  type: z.literal('TERMINAL_CHUNK'),
  data: z.string().max(1_048_576),
});

/** Output that could never be spooled (the runner was dead): recorded, never a silent hole. */
export const OutputGapSchema = z.object({
  ...base,
  type: z.literal('OUTPUT_GAP'),
  reason: z.string().max(WIRE_LIMITS.TEXT),
  down_since: z.number().int().nonnegative().nullable(),
});

export const FileTouchedSchema = z.object({
  ...base,
  type: z.literal('FILE_TOUCHED'),
  path: z.string().min(1).max(WIRE_LIMITS.PATH),
  room_path: RoomPathSchema,
  reason: z.enum(['write', 'read', 'diff']),
});

export const DiffSummarySchema = z.object({
  ...base,
  type: z.literal('DIFF_SUMMARY'),
  files: z.array(z.object({ path: z.string(), added: z.number().int().nullable(), removed: z.number().int().nullable() })).max(WIRE_LIMITS.DIFF_FILES),
  final: z.boolean(),
  /**
   * On the final summary only: the session's whole change as a unified diff, for its story (cut
   * at STORY_PATCH_MAX_CHARS by the runner; the schema allows twice that, because masking a
   * secret can lengthen the text after the cut and a refused event would stall the session's delivery).
   */
  patch: z.string().max(STORY_PATCH_MAX_CHARS * 2).optional(),
});

export const TestRunStartedSchema = z.object({
  ...base,
  type: z.literal('TEST_RUN_STARTED'),
  command: z.string().max(WIRE_LIMITS.COMMAND),
});

export const TestRunFinishedSchema = z.object({
  ...base,
  type: z.literal('TEST_RUN_FINISHED'),
  command: z.string().max(WIRE_LIMITS.COMMAND),
  passed: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  exit_code: z.number().int().nullable(),
});

/** `dta`: the gate between a DTA run's dry-run and its apply (the control plane's own card). */
export const ApprovalCategorySchema = z.enum(['merge', 'deps_add', 'secrets', 'deploy', 'dta']);

/** What the approver sees: exactly what will happen and why it was stopped. */
export const ApprovalContextSchema = z
  .object({
    /** The command as it will run (argv joined for display). */
    command: z.string().max(WIRE_LIMITS.POLICY_COMMAND),
    /** sha256 of the exact argv + cwd: the decision is bound to it. */
    command_hash: z.string().min(1).max(200),
    cwd: z.string().max(4096).optional(),
    branch: z.string().max(255).optional(),
    target_branch: z.string().max(255).optional(),
    changed_files: z.number().int().nonnegative().optional(),
    diff_stat: z.string().max(20_000).optional(),
    /** The revision range changed_files and diff_stat measure (merge-base..source, remote/dst..src). */
    range: z.string().max(600).optional(),
    blast_radius: BlastRadiusSchema.optional(),
    /** The policy rule that matched, in words ("merge into protected branch main"). */
    rule: z.string().max(WIRE_LIMITS.RULE),
    /** Where the request came from: a PATH shim, a provider hook, a DTA gate. */
    source: z.enum(['shim', 'hook', 'dta']),
    expires_at: z.number().int().nonnegative(),
  })
  .catchall(z.unknown());
export type ApprovalContext = z.infer<typeof ApprovalContextSchema>;

export const ApprovalRequestedSchema = z.object({
  ...base,
  type: z.literal('APPROVAL_REQUESTED'),
  approval_id: z.string().min(1).max(100),
  category: ApprovalCategorySchema,
  summary: z.string().max(WIRE_LIMITS.TEXT),
  risk: z.enum(['low', 'medium', 'high']),
  context: ApprovalContextSchema,
});

export const ApprovalResolvedSchema = z.object({
  ...base,
  type: z.literal('APPROVAL_RESOLVED'),
  approval_id: z.string().min(1).max(100),
  decision: z.enum(['allow', 'deny']),
  note: z.string().max(2000).optional(),
  decided_by: z.string().max(WIRE_LIMITS.NAME).optional(),
  /** decided by a person, expired unanswered (deny), or lost with a runner restart (deny). */
  reason: z.enum(['decided', 'expired', 'runner_restarted', 'session_ended']).default('decided'),
});

/** A command or write the policy refused: it did not happen. */
export const PolicyBlockedSchema = z.object({
  ...base,
  type: z.literal('POLICY_BLOCKED'),
  /** The command that was refused, or the path whose write was refused/reverted. */
  command: z.string().max(WIRE_LIMITS.POLICY_COMMAND).optional(),
  path: z.string().max(WIRE_LIMITS.PATH).optional(),
  /** The host a refused network connection was for (egress allowlist). */
  host: z.string().max(300).optional(),
  rule: z.string().max(WIRE_LIMITS.RULE),
  detail: z.string().max(WIRE_LIMITS.TEXT),
  /** Strict tools: the DTA whose domain the refused or reverted edit was in. */
  dta_tool: DtaToolSchema.optional(),
  /** prevented: it never ran; reverted: it ran and was undone (path guards where prevention is impossible). */
  outcome: z.enum(['prevented', 'reverted']),
});

export const AlertRaisedSchema = z.object({
  ...base,
  type: z.literal('ALERT_RAISED'),
  severity: z.enum(['info', 'warning', 'error']),
  message: z.string().max(WIRE_LIMITS.MESSAGE),
  room_path: RoomPathSchema.optional(),
  /** Set when a patrol found it: the control plane keeps it as an alert (a bug sprite) until fixed. */
  patrol_id: z.string().min(1).max(100).optional(),
  /** The file the failure points to (relative to the repository root) and its line. */
  path: z.string().min(1).max(WIRE_LIMITS.PATH).optional(),
  line: z.number().int().positive().optional(),
  /** The lines of the log about it. */
  excerpt: z.string().max(MAX_ALERT_EXCERPT_CHARS).optional(),
  /** Same patrol + same fingerprint in a later run = the same alert, still there. */
  fingerprint: z.string().min(1).max(4200).optional(),
});

/** A patrol's structured result, sent after its command ended and before the final state change. */
export const PatrolFinishedSchema = z.object({
  ...base,
  type: z.literal('PATROL_FINISHED'),
  patrol_id: z.string().min(1).max(100),
  run_id: z.string().min(1).max(100),
  kind: PatrolKindSchema,
  /** passed: exit 0; failed: the check failed; error: it could not run (timeout, stopped, setup). */
  status: z.enum(['passed', 'failed', 'error']),
  exit_code: z.number().int().nullable(),
  summary: z.string().max(WIRE_LIMITS.TEXT),
  /** The commit it checked; null when no worktree could be made. */
  commit_sha: z.string().regex(/^[0-9a-f]{7,64}$/).nullable(),
  tests: z.object({ passed: z.number().int().nonnegative(), failed: z.number().int().nonnegative() }).nullable(),
  /** ALERT_RAISED events this run sent before this one. */
  findings: z.number().int().nonnegative(),
  duration_ms: z.number().int().nonnegative(),
});

/**
 * What the agent is doing, from the provider's own signals (hooks: a turn ended, it waits for
 * input, a notification) or the runner's idle detection. Not a lifecycle state: a RUNNING
 * session can be working, waiting for input or idle.
 */
export const AgentActivitySchema = z.object({
  ...base,
  type: z.literal('AGENT_ACTIVITY'),
  activity: z.enum(['working', 'waiting_for_input', 'idle']),
  detail: z.string().max(WIRE_LIMITS.TEXT),
  /** Since when (epoch ms) the agent has been in this activity. */
  since: z.number().int().nonnegative(),
});

export const UsageTickSchema = z.object({
  ...base,
  type: z.literal('USAGE_TICK'),
  provider: ProviderIdSchema,
  window_start: z.number().int().nonnegative(),
  units: z.object({
    agent_seconds: z.number().nonnegative(),
    terminal_kb: z.number().nonnegative(),
    files_touched: z.number().int().nonnegative(),
    /** Calls into the provider in the window: prompts/turns from its hooks; for a shell, its start. Older runners omit it. */
    provider_invocations: z.number().int().nonnegative().default(0),
  }),
});

/**
 * A deterministic run started with this session as its parent finished (deterministic-executor.md
 * "Callback"): the result, in the session's own stream. The agent reads the whole result from
 * `inbox_path` (also announced to Claude Code through its hooks).
 */
export const RunResultEventSchema = z.object({
  ...base,
  type: z.literal('RUN_RESULT'),
  run_id: z.string().min(1).max(100),
  agent_name: z.string().min(1).max(100),
  status: z.enum(['completed', 'failed']),
  result_type: z.literal('procedural'),
  /** stdout, cut to 64 KB here (the inbox file has all of it). */
  result_text: z.string().max(70_000),
  result_data: z.unknown().nullable(),
  exit_code: z.number().int().nullable(),
  error: z.string().max(4000).nullable(),
  inbox_path: z.string().max(4096).nullable(),
});
export type RunResultEvent = z.infer<typeof RunResultEventSchema>;

/**
 * What a redactor masked in one session, so far (issue 10): rule names and secret *names* with
 * counts and the first/last seq they were masked in; never a value. The runner sends its receipt
 * when the session ends; the control plane adds what it masked itself.
 */
export const RedactionReceiptEntrySchema = z.object({
  rule: z.string().min(1).max(100),
  secret_name: z.string().min(1).max(128).nullable(),
  count: z.number().int().positive(),
  first_seq: z.number().int().nonnegative(),
  last_seq: z.number().int().nonnegative(),
});
export type RedactionReceiptEntry = z.infer<typeof RedactionReceiptEntrySchema>;
export const RedactionReceiptSchema = z.object({
  ...base,
  type: z.literal('REDACTION_RECEIPT'),
  entries: z.array(RedactionReceiptEntrySchema).max(1000),
});
export type RedactionReceipt = z.infer<typeof RedactionReceiptSchema>;
/** An agent's own DTA run (av-dta in its session, run by the runner): its dta_* events in the session's stream. */
export const DtaSessionEventSchema = z.object({
  ...base,
  type: z.literal('DTA_EVENT'),
  event: DtaEventSchema,
});
export type DtaSessionEvent = z.infer<typeof DtaSessionEventSchema>;

export const RunnerEventSchema = z.discriminatedUnion('type', [
  DtaSessionEventSchema,
  SessionStartedSchema,
  SessionStateChangedSchema,
  TerminalChunkSchema,
  OutputGapSchema,
  FileTouchedSchema,
  DiffSummarySchema,
  TestRunStartedSchema,
  TestRunFinishedSchema,
  ApprovalRequestedSchema,
  ApprovalResolvedSchema,
  AlertRaisedSchema,
  PatrolFinishedSchema,
  PolicyBlockedSchema,
  AgentActivitySchema,
  UsageTickSchema,
  RunResultEventSchema,
  RedactionReceiptSchema,
]);
export type RunnerEvent = z.infer<typeof RunnerEventSchema>;
export type RunnerEventType = RunnerEvent['type'];
export type TerminalChunk = z.infer<typeof TerminalChunkSchema>;
export type SessionStateChanged = z.infer<typeof SessionStateChangedSchema>;
export type AgentActivity = z.infer<typeof AgentActivitySchema>;
export type ApprovalRequested = z.infer<typeof ApprovalRequestedSchema>;
export type PolicyBlocked = z.infer<typeof PolicyBlockedSchema>;
export type DiffSummary = z.infer<typeof DiffSummarySchema>;
export type TestRunFinished = z.infer<typeof TestRunFinishedSchema>;
export type UsageTick = z.infer<typeof UsageTickSchema>;
export type AlertRaised = z.infer<typeof AlertRaisedSchema>;
export type PatrolFinished = z.infer<typeof PatrolFinishedSchema>;

/** The part of an event a runner fills in before the spool assigns seq and ts. */
export type RunnerEventBody = RunnerEvent extends infer E
  ? E extends RunnerEvent
    ? Omit<E, 'seq' | 'ts' | 'session_id' | 'org_id' | 'repo_id' | 'repo_ref'>
    : never
  : never;
