import { z } from 'zod';
import { DtaRunUpdateSchema, type DecideDtaCommand, type StartDtaCommand } from './dta';
import { QuestStepUpdateSchema, type ReplayStepCommand, type RunWorkItemLevelCommand, type RunWorkItemWithAttempt } from './quests';
import type { Ack } from './result';
import { OrgIdSchema, SessionIdSchema } from './world';

/**
 * Deterministic agents (deterministic-executor.md): blueprints a runner loads from its folder, the
 * runs the control plane routes to the runner that owns the blueprint, the invocation the executor
 * reads on stdin (schema 2.2) and the `result` event it sends back.
 */

// ── Limits (named so the runner, the executor and the server agree) ─────────────────────────────

export const DETERMINISTIC_LIMITS = {
  /** Default wall-clock limit of one run; a blueprint may set 1..MAX_TIMEOUT_SECONDS. */
  DEFAULT_TIMEOUT_SECONDS: 300,
  MAX_TIMEOUT_SECONDS: 3600,
  /**
   * Raw stdout kept per run. JSON-escaping can grow control bytes six-fold, and the result must fit
   * one Socket.IO message (4 MB on our server), so half a megabyte is the ceiling.
   */
  MAX_STDOUT_BYTES: 512 * 1024,
  /** The tail of stderr kept for diagnosis (where the error usually is). */
  MAX_STDERR_BYTES: 16 * 1024,
  /** A blueprint file larger than this is not a blueprint. */
  MAX_BLUEPRINT_FILE_BYTES: 256 * 1024,
  MAX_BLUEPRINTS_PER_RUNNER: 200,
  /** All of a runner's blueprints together: they ride in its register message (4 MB per message). */
  MAX_BLUEPRINTS_TOTAL_BYTES: 2 * 1024 * 1024,
  /** What a RUN_RESULT event carries into a parent session's stream (the inbox file has it all). */
  MAX_CALLBACK_TEXT: 64 * 1024,
} as const;

/** A blueprint's name: what POST /api/runs calls it by. */
export const AgentNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be 1–64 letters, digits, ".", "_" or "-", starting with a letter or digit');

/**
 * A parameter name becomes `--name` on the command line: letters first (so JSON keeps the order
 * they were given in), then letters, digits, "_", "." or "-". No "=" or spaces can sneak into a flag.
 */
export const ParameterNameSchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/, 'parameter names must start with a letter or "_" and use letters, digits, "_", "." or "-"');

export const ParametersSchema = z.record(ParameterNameSchema, z.unknown());
export type Parameters = z.infer<typeof ParametersSchema>;

/** A JSON Schema for the parameters object (compiled with ajv where it is used). */
export const ParametersJsonSchemaSchema = z
  .record(z.string(), z.unknown())
  .refine((s) => s.type === 'object', { message: 'must be a JSON Schema with "type": "object" (parameters are an object)' });

/** A blueprint file (`*.json` in the runner's blueprints folder). */
export const BlueprintFileSchema = z.strictObject({
  name: AgentNameSchema,
  description: z.string().max(2000),
  /** Split into argv with shell-words rules; no shell ever runs it. */
  command: z.string().trim().min(1, 'must not be empty').max(4096),
  parameters_schema: ParametersJsonSchemaSchema,
  /** Optional: seconds before the run is killed (default DEFAULT_TIMEOUT_SECONDS). */
  timeout_seconds: z.number().int().min(1).max(DETERMINISTIC_LIMITS.MAX_TIMEOUT_SECONDS).optional(),
  /** Optional: where the command runs, absolute or relative to the blueprints folder (default: the folder). */
  project_dir: z.string().min(1).max(4096).optional(),
  /** JSON Schema's own "$schema"/"$comment" are welcome at the top of a file too. */
  $schema: z.string().optional(),
  $comment: z.string().optional(),
});
export type BlueprintFile = z.infer<typeof BlueprintFileSchema>;

/** A blueprint as a runner registers it: defaults filled in, project_dir absolute. */
export const BlueprintSchema = z.object({
  name: AgentNameSchema,
  description: z.string().max(2000),
  command: z.string().min(1).max(4096),
  parameters_schema: ParametersJsonSchemaSchema,
  timeout_seconds: z.number().int().min(1).max(DETERMINISTIC_LIMITS.MAX_TIMEOUT_SECONDS),
  project_dir: z.string().min(1).max(4096),
});
export type Blueprint = z.infer<typeof BlueprintSchema>;

/** A blueprint file the runner skipped, and why (shown in the workshop next to its runner). */
export const BlueprintProblemSchema = z.object({ file: z.string().max(500), reason: z.string().max(2000) });
export type BlueprintProblem = z.infer<typeof BlueprintProblemSchema>;

/** `runner:blueprints`: the runner's whole catalogue after its folder changed (replaces the stored one). */
export const RunnerBlueprintsSchema = z.object({
  blueprints: z.array(BlueprintSchema).max(DETERMINISTIC_LIMITS.MAX_BLUEPRINTS_PER_RUNNER),
  problems: z.array(BlueprintProblemSchema).max(DETERMINISTIC_LIMITS.MAX_BLUEPRINTS_PER_RUNNER),
});
export type RunnerBlueprints = z.infer<typeof RunnerBlueprintsSchema>;

export const RunIdSchema = z.string().regex(/^run_[A-Za-z0-9_-]{6,64}$/, 'must be a run id (run_…)');
export const RunStatusSchema = z.enum(['queued', 'running', 'completed', 'failed']);
export type RunStatus = z.infer<typeof RunStatusSchema>;

// ── The executor's contract ──────────────────────────────────────────────────────────────────────

export const RESUME_REFUSED = 'Deterministic agents do not support resumption';

/**
 * The invocation the executor reads on stdin (deterministic-executor.md, schema 2.2). For a run,
 * `session_id` is the run's id. `gateway_token` is ours: the result is posted with it (stdin is
 * private, unlike argv or the environment the command inherits).
 */
export const InvocationSchema = z
  .object({
    schema_version: z.literal('2.2'),
    mode: z.enum(['start', 'resume']),
    session_id: z.string().min(1).max(100),
    parameters: ParametersSchema,
    command: z.string().trim().min(1).max(4096),
    project_dir: z.string().min(1).max(4096),
    gateway_url: z.string().url(),
    gateway_token: z.string().min(1).max(200).optional(),
    timeout_seconds: z.number().int().min(1).max(DETERMINISTIC_LIMITS.MAX_TIMEOUT_SECONDS).optional(),
  })
  .refine((inv) => inv.mode !== 'resume', { message: RESUME_REFUSED, path: ['mode'] });
export type Invocation = z.infer<typeof InvocationSchema>;

/** The `result` event the executor sends (deterministic-executor.md "Result Event"), plus diagnostics. */
export const ProceduralResultSchema = z.object({
  event_type: z.literal('result'),
  session_id: z.string().min(1).max(100),
  /** ISO 8601. */
  timestamp: z.string().max(40),
  result_type: z.literal('procedural'),
  /** Always the raw stdout (up to MAX_STDOUT_BYTES). */
  result_text: z.string(),
  /** stdout parsed as JSON when it is JSON, else null. */
  result_data: z.unknown().nullable(),
  /** The command's exit code; null when it was killed by a signal. */
  exit_code: z.number().int().nullable(),
  /** What went to stderr (its tail). */
  stderr: z.string().max(DETERMINISTIC_LIMITS.MAX_STDERR_BYTES * 2).default(''),
  stdout_truncated: z.boolean().default(false),
  timed_out: z.boolean().default(false),
  signal: z.string().max(20).nullable().default(null),
  /** The command could not be started at all (not found, not executable). */
  spawn_error: z.string().max(2000).nullable().default(null),
  duration_ms: z.number().int().nonnegative().default(0),
});
export type ProceduralResult = z.infer<typeof ProceduralResultSchema>;

// ── Control plane ↔ runner ───────────────────────────────────────────────────────────────────────

/** `run:start`: run this blueprint of yours with these (already validated) parameters. */
export const StartRunCommandSchema = z.object({
  run_id: RunIdSchema,
  org_id: OrgIdSchema,
  agent_name: AgentNameSchema,
  parameters: ParametersSchema,
});
export type StartRunCommand = z.infer<typeof StartRunCommandSchema>;

/** Runner → control plane: a run's progress. Spooled until acked, so a reconnect never loses it. */
export const RunUpdateSchema = z.discriminatedUnion('type', [
  /** A DTA run's progress shares the channel (and its spool-until-acked delivery). */
  DtaRunUpdateSchema,
  /** So do quest steps' outcomes (protocol/quests.ts). */
  QuestStepUpdateSchema,
  z.object({ type: z.literal('RUN_STARTED'), run_id: RunIdSchema, ts: z.number().int().nonnegative() }),
  z.object({
    type: z.literal('RUN_FINISHED'),
    run_id: RunIdSchema,
    ts: z.number().int().nonnegative(),
    status: z.enum(['completed', 'failed']),
    /** The executor's result event; null when none came (the executor crashed, the runner restarted). */
    result: ProceduralResultSchema.nullable(),
    /** Why it failed, in words, when it did. */
    error: z.string().max(4000).nullable(),
  }),
]);
export type RunUpdate = z.infer<typeof RunUpdateSchema>;
export const RunUpdateBatchSchema = z.array(RunUpdateSchema).min(1).max(100);
export const RunUpdateAckSchema = z.object({ acked: z.number().int().nonnegative() });

/** What a runner still knows about (running or unacked) when it registers. */
export const KnownRunSchema = z.object({ run_id: RunIdSchema });

/**
 * `session:run_result`: a run started with this session as its parent finished; the session's
 * runner records it in the session's stream (RUN_RESULT) and the agent's inbox.
 */
export const DeliverRunResultCommandSchema = z.object({
  session_id: SessionIdSchema,
  run_id: RunIdSchema,
  agent_name: AgentNameSchema,
  status: z.enum(['completed', 'failed']),
  result_type: z.literal('procedural'),
  result_text: z.string(),
  result_data: z.unknown().nullable(),
  exit_code: z.number().int().nullable(),
  error: z.string().max(4000).nullable(),
});
export type DeliverRunResultCommand = z.infer<typeof DeliverRunResultCommandSchema>;

// ── REST / UI ─────────────────────────────────────────────────────────────────────────────────────

/** POST /api/runs. */
export const CreateRunBodySchema = z.object({
  agent_name: AgentNameSchema,
  parameters: ParametersSchema.default({}),
  mode: z.enum(['start', 'resume']).default('start'),
  /** The session that gets the result when the run ends (an event on its stream + its inbox). */
  parent_session_id: SessionIdSchema.optional(),
  /** Only needed when two runners offer a blueprint of the same name. */
  runner_id: z.string().min(1).max(100).optional(),
});
export type CreateRunBody = z.infer<typeof CreateRunBodySchema>;

/** A deterministic agent as listed: one blueprint of one runner. */
export const DeterministicAgentSchema = z.object({
  name: z.string(),
  type: z.literal('procedural'),
  description: z.string(),
  command: z.string(),
  parameters_schema: z.record(z.string(), z.unknown()),
  timeout_seconds: z.number().int(),
  runner_id: z.string(),
  runner_name: z.string(),
  runner_online: z.boolean(),
});
export type DeterministicAgent = z.infer<typeof DeterministicAgentSchema>;

export const AgentCatalogSchema = z.object({
  agents: z.array(DeterministicAgentSchema),
  /** Blueprint files the online runners skipped. */
  problems: z.array(BlueprintProblemSchema.extend({ runner_id: z.string(), runner_name: z.string() })),
});
export type AgentCatalog = z.infer<typeof AgentCatalogSchema>;

export const RunSummarySchema = z.object({
  id: z.string(),
  agent_name: z.string(),
  runner_id: z.string().nullable(),
  runner_name: z.string(),
  status: RunStatusSchema,
  /** Why it is in this status, in words. */
  reason: z.string(),
  command: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  parent_session_id: z.string().nullable(),
  created_by: z.string(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  ended_at: z.string().nullable(),
  result_type: z.literal('procedural').nullable(),
  result_text: z.string().nullable(),
  result_data: z.unknown().nullable(),
  exit_code: z.number().int().nullable(),
  stderr: z.string(),
  stdout_truncated: z.boolean(),
  timed_out: z.boolean(),
  /** Delivery of the result to the parent session. */
  callback: z.object({ state: z.enum(['none', 'pending', 'delivered', 'failed']), detail: z.string() }),
});
export type RunSummary = z.infer<typeof RunSummarySchema>;

export interface DeterministicRunnerToServerEvents {
  'runner:blueprints': (body: RunnerBlueprints, ack: Ack<{ stored: number }>) => void;
  'run:updates': (batch: RunUpdate[], ack: Ack<z.infer<typeof RunUpdateAckSchema>>) => void;
}

export interface DeterministicServerToRunnerEvents {
  'dta:start': (cmd: StartDtaCommand, ack: Ack<{ run_id: string }>) => void;
  'dta:decide': (cmd: DecideDtaCommand, ack: Ack<null>) => void;
  'run:start': (cmd: StartRunCommand, ack: Ack<{ run_id: string }>) => void;
  'session:run_result': (cmd: DeliverRunResultCommand, ack: Ack<{ inbox_path: string | null }>) => void;
  /** A quest step as a work item; the outcome comes back as a QUEST_STEP update. */
  'workitem:run': (cmd: RunWorkItemWithAttempt, ack: Ack<{ accepted: true }>) => void;
  'workitem:run-level': (cmd: RunWorkItemLevelCommand, ack: Ack<{ accepted: true }>) => void;
  'workitem:replay': (cmd: ReplayStepCommand, ack: Ack<{ accepted: true }>) => void;
}
