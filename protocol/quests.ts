import { z } from 'zod';

/**
 * Quests: a goal → a plan (planner-determinism.md) → work items in a DAG (agentrun-contract.md)
 * → RunResults with BLAKE3 receipts that anyone can replay. Field names follow the two specs
 * (snake_case) so a plan or a receipt reads the same in a file, on the wire and in the UI.
 */

export const QUEST_LIMITS = {
  MAX_GOAL_CHARS: 2000,
  MAX_CONTEXT_CHARS: 20_000,
  MAX_STEPS: 50,
  MAX_RETRIES: 5,
  /** The contract's defaults for an agent work item. */
  DEFAULT_MAX_FILES: 10,
  DEFAULT_MAX_TOOL_OPS: 50,
  DEFAULT_MAX_DELTA_SIZE: 100,
  DEFAULT_TIMEOUT_MS: 300_000,
  MAX_TIMEOUT_MS: 3_600_000,
  /** Test output kept in a RunResult (the tail: failures print last). */
  MAX_TEST_OUTPUT_CHARS: 20_000,
  /** A patch carried in a receipt for agent steps (replay re-applies it). */
  MAX_PATCH_CHARS: 2_000_000,
} as const;

export const DeterminismModeSchema = z.enum(['full', 'structural', 'none']);
export type DeterminismMode = z.infer<typeof DeterminismModeSchema>;

export const StepIdSchema = z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, 'a step id: lower-case letters, digits, - and _');
export const OnErrorSchema = z.enum(['abort', 'continue', 'retry']);

/**
 * The contract's constraints. Definitions (the runner measures them against the checkpoint):
 * - max_files: distinct paths added, modified or deleted;
 * - max_tool_ops: tool calls the provider's hooks reported + commands the runner started
 *   (the agent itself, the test command) + DTA calls;
 * - max_delta_size: changed lines, added + deleted, as `git diff --numstat` counts them
 *   (a binary file counts 1).
 */
export const WorkItemConstraintsSchema = z
  .object({
    max_files: z.number().int().min(0).max(100_000).default(QUEST_LIMITS.DEFAULT_MAX_FILES),
    max_tool_ops: z.number().int().min(0).max(100_000).default(QUEST_LIMITS.DEFAULT_MAX_TOOL_OPS),
    max_delta_size: z.number().int().min(0).max(10_000_000).default(QUEST_LIMITS.DEFAULT_MAX_DELTA_SIZE),
    timeout_ms: z.number().int().min(100).max(QUEST_LIMITS.MAX_TIMEOUT_MS).default(QUEST_LIMITS.DEFAULT_TIMEOUT_MS),
  })
  .strict();
export type WorkItemConstraints = z.infer<typeof WorkItemConstraintsSchema>;

/** One step of a plan (planner-determinism.md "Plan Structure Contract", plus why it was chosen). */
export const PlanStepSchema = z
  .object({
    step_id: StepIdSchema,
    skill: z.string().min(1).max(100),
    params: z.record(z.string(), z.unknown()),
    depends_on: z.array(StepIdSchema).max(QUEST_LIMITS.MAX_STEPS).default([]),
    on_error: OnErrorSchema.default('abort'),
    retry_count: z.number().int().min(0).max(QUEST_LIMITS.MAX_RETRIES).default(3),
    output_key: z.string().min(1).max(64).optional(),
    /** Why the planner chose this skill, in words (shown on the plan). */
    reason: z.string().max(1000).default(''),
    constraints: WorkItemConstraintsSchema.partial().optional(),
    test_command: z.string().min(1).max(1000).optional(),
  })
  .strict();
export type PlanStep = z.infer<typeof PlanStepSchema>;

export const PlanMetadataSchema = z
  .object({
    planner: z.string(),
    planner_version: z.string(),
    model: z.string().optional(),
    input_tokens: z.number().int().nonnegative().optional(),
    output_tokens: z.number().int().nonnegative().optional(),
    cost_cents: z.number().nonnegative().optional(),
    /** Left out by `full` planners (it would make two equal plans differ); in the output's metadata instead. */
    generated_at: z.string().optional(),
    deterministic: z.boolean(),
    plan_input_hash: z.string().optional(),
  })
  .passthrough();

export const QuestPlanSchema = z.object({ steps: z.array(PlanStepSchema).min(1).max(QUEST_LIMITS.MAX_STEPS), metadata: PlanMetadataSchema });
export type QuestPlan = z.infer<typeof QuestPlanSchema>;

export const PlannerErrorCodeSchema = z.enum([
  'PLANNER_BAD_INPUT',
  'PLANNER_INVALID_PLAN',
  'PLANNER_DUPLICATE_STEP',
  'PLANNER_UNKNOWN_DEPENDENCY',
  'PLANNER_CYCLE',
  'PLANNER_UNKNOWN_SKILL',
  'PLANNER_BAD_PARAMS',
  'PLANNER_RATE_LIMITED',
  'PLANNER_TIMEOUT',
  'PLANNER_UNAVAILABLE',
  'PLANNER_UNKNOWN',
]);
/** planner-determinism.md "Error Handling": planners return this, never throw. */
export const PlannerErrorSchema = z.object({
  code: PlannerErrorCodeSchema,
  message: z.string(),
  retryable: z.boolean(),
  details: z.record(z.string(), z.unknown()),
});
export type PlannerError = z.infer<typeof PlannerErrorSchema>;

/** A skill a plan may name: a DTA, a runner blueprint, an agent provider, or a control step. */
export const SkillKindSchema = z.enum(['dta', 'blueprint', 'agent', 'gate', 'test']);
export const SkillSchema = z.object({
  name: z.string().min(1).max(100),
  kind: SkillKindSchema,
  summary: z.string().max(500),
  /** JSON Schema of the step's params (ajv on the control plane). */
  params_schema: z.record(z.string(), z.unknown()),
  /** Whether re-running it on the same tree gives the same tree (replay re-runs it) or not (replay re-applies the patch). */
  deterministic: z.boolean(),
});
export type Skill = z.infer<typeof SkillSchema>;

export const PlannerInfoSchema = z.object({
  id: z.string(),
  version: z.string(),
  determinism: DeterminismModeSchema,
  cost_model: z.record(z.string(), z.number()),
  summary: z.string(),
  available: z.boolean(),
});
export type PlannerInfo = z.infer<typeof PlannerInfoSchema>;

// ── Work items on the runner (agentrun-contract.md) ─────────────────────────────────────────────

export const WorkItemSchema = z
  .object({
    id: z.string().regex(/^wi_[A-Za-z0-9_-]{4,100}$/),
    agent_id: z.string().min(1).max(100),
    description: z.string().max(QUEST_LIMITS.MAX_GOAL_CHARS),
    dependencies: z.array(z.string().max(110)).max(QUEST_LIMITS.MAX_STEPS),
    constraints: WorkItemConstraintsSchema,
    budget: z.object({ time_estimate_ms: z.number().int().nonnegative(), complexity: z.enum(['low', 'medium', 'high']) }),
    input_files: z.array(z.string().max(4096)).max(1000).optional(),
    output_files: z.array(z.string().max(4096)).max(1000).optional(),
    test_command: z.string().min(1).max(1000).optional(),
    /** What to run: the plan step's skill and params (the runner checks them again). */
    skill: z.string().min(1).max(100),
    params: z.record(z.string(), z.unknown()),
  })
  .strict();
export type WorkItem = z.infer<typeof WorkItemSchema>;

export const WorkItemStatusSchema = z.enum(['success', 'failure', 'denied', 'timeout']);
export type WorkItemStatus = z.infer<typeof WorkItemStatusSchema>;

export const RunResultSchema = z.object({
  status: WorkItemStatusSchema,
  receipt_id: z.string(),
  receipt_path: z.string(),
  modified_files: z.array(z.string()),
  created_files: z.array(z.string()),
  deleted_files: z.array(z.string()),
  output_hash: z.string(),
  artifact_hashes: z.record(z.string(), z.string()),
  metrics: z.object({
    execution_time_ms: z.number().nonnegative(),
    tool_ops_count: z.number().int().nonnegative(),
    delta_size: z.number().int().nonnegative(),
    files_touched: z.number().int().nonnegative(),
    tests_passed: z.number().int().nonnegative().optional(),
    tests_failed: z.number().int().nonnegative().optional(),
  }),
  test_output: z.string().optional(),
  proof_script: z.string().optional(),
  error: z.string().optional(),
  denial_reason: z.string().optional(),
});
export type RunResult = z.infer<typeof RunResultSchema>;

/** How a receipt is replayed: deterministic steps re-run; agent steps re-apply their patch. */
export const ReplayKindSchema = z.enum(['rerun', 'patch']);

/** RECEIPT.json: everything needed to check a work item's outcome, hashes in BLAKE3 (hex). */
export const ReceiptSchema = z.object({
  receipt_id: z.string(),
  version: z.literal(1),
  work_item: WorkItemSchema,
  replay: ReplayKindSchema,
  before_commit: z.string().regex(/^[0-9a-f]{40,64}$/),
  after_commit: z.string().regex(/^[0-9a-f]{40,64}$/),
  before_hash: z.string(),
  after_hash: z.string(),
  artifact_hashes: z.record(z.string(), z.string()),
  /** The unified diff before → after (what a `patch` replay re-applies). */
  patch: z.string().max(QUEST_LIMITS.MAX_PATCH_CHARS),
  patch_hash: z.string(),
  metrics: RunResultSchema.shape.metrics,
  created_at: z.string(),
  /** Blueprint steps: the blueprint that ran (a replay re-runs exactly this command, or reports a mismatch). */
  blueprint: z
    .object({ name: z.string().max(100), command: z.string().max(4096), timeout_seconds: z.number().int().positive(), parameters: z.record(z.string(), z.unknown()) })
    .optional(),
});
export type Receipt = z.infer<typeof ReceiptSchema>;

export const ReplayResultSchema = z.object({
  verified: z.boolean(),
  replay: ReplayKindSchema,
  expected_hash: z.string(),
  actual_hash: z.string().nullable(),
  detail: z.string(),
});
export type ReplayResult = z.infer<typeof ReplayResultSchema>;

// ── Control plane → runner ───────────────────────────────────────────────────────────────────────

/** `workitem:run`: run one work item on the quest's branch from `base_commit`; answered with its RunResult and receipt. */
export const RunWorkItemCommandSchema = z.object({
  quest_id: z.string().regex(/^qst_[A-Za-z0-9_-]{6,64}$/),
  step_id: StepIdSchema,
  org_id: z.string().min(1).max(100),
  repo_id: z.string().min(1).max(100),
  repo_source: z.string().min(1).max(4096),
  /** The branch the quest works on (created from base_ref on the first step). */
  branch: z.string().min(1).max(255),
  base_ref: z.string().min(1).max(255),
  work_item: WorkItemSchema,
});
export type RunWorkItemCommand = z.infer<typeof RunWorkItemCommandSchema>;

export const WorkItemOutcomeSchema = z.object({ result: RunResultSchema, receipt: ReceiptSchema.nullable(), head: z.string() });
export type WorkItemOutcome = z.infer<typeof WorkItemOutcomeSchema>;

/** `workitem:replay`: replay a stored receipt on a fresh worktree of the repository. */
export const ReplayWorkItemCommandSchema = z.object({
  repo_id: z.string().min(1).max(100),
  repo_source: z.string().min(1).max(4096),
  branch: z.string().min(1).max(255),
  receipt: ReceiptSchema,
});
export type ReplayWorkItemCommand = z.infer<typeof ReplayWorkItemCommandSchema>;

// ── API and UI ───────────────────────────────────────────────────────────────────────────────────

export const QuestStepStateSchema = z.enum(['pending', 'blocked', 'running', 'waiting_for_approval', 'succeeded', 'failed', 'denied', 'skipped']);
export type QuestStepState = z.infer<typeof QuestStepStateSchema>;
export const QuestStateSchema = z.enum(['planned', 'running', 'waiting_for_approval', 'succeeded', 'failed']);
export type QuestState = z.infer<typeof QuestStateSchema>;

/** POST /api/quests */
export const CreateQuestBodySchema = z
  .object({
    repo_id: z.string().min(1).max(100),
    goal: z.string().trim().min(3).max(QUEST_LIMITS.MAX_GOAL_CHARS),
    planner: z.string().min(1).max(50).default('rule'),
    context_summary: z.string().max(QUEST_LIMITS.MAX_CONTEXT_CHARS).optional(),
    /** The agent provider for agent steps (default: the repository's first available). */
    agent_provider: z.string().min(1).max(50).optional(),
    test_command: z.string().min(1).max(1000).optional(),
  })
  .strict();
export type CreateQuestBody = z.infer<typeof CreateQuestBodySchema>;

export const DecideQuestGateBodySchema = z.object({ decision: z.enum(['allow', 'deny']), note: z.string().max(1000).optional() }).strict();

/** What a DTA step's dry-run proposed: the gate approves this patch, the apply step is bound to its hash. */
export const QuestDtaProposalSchema = z.object({
  patch_sha256: z.string().nullable(),
  files: z.array(z.string()).max(100_000),
  proposed_changes: z.record(z.string(), z.number()),
  patch: z.string().max(500_000),
});
export type QuestDtaProposal = z.infer<typeof QuestDtaProposalSchema>;

export const QuestStepSummarySchema = z.object({
  step_id: z.string(),
  skill: z.string(),
  state: QuestStepStateSchema,
  reason: z.string(),
  attempts: z.number().int(),
  result: RunResultSchema.nullable(),
  receipt: ReceiptSchema.nullable(),
  replay: ReplayResultSchema.nullable(),
  /** DTA dry-runs: the proposal a gate shows and approves. */
  proposal: QuestDtaProposalSchema.nullable(),
});
export type QuestStepSummary = z.infer<typeof QuestStepSummarySchema>;

export const QuestSummarySchema = z.object({
  id: z.string(),
  repo_id: z.string(),
  goal: z.string(),
  planner: z.string(),
  plan: QuestPlanSchema,
  plan_input_hash: z.string(),
  state: QuestStateSchema,
  reason: z.string(),
  branch: z.string(),
  runner_id: z.string().nullable(),
  steps: z.array(QuestStepSummarySchema),
  created_by: z.string(),
  created_at: z.string(),
});
export type QuestSummary = z.infer<typeof QuestSummarySchema>;

/**
 * A quest step failed (or was denied / timed out): one typed event for whoever wants to tell
 * people (notifications hook this; the quest page shows the same reason).
 */
export const QuestStepFailedEventSchema = z.object({
  type: z.literal('QUEST_STEP_FAILED'),
  org_id: z.string(),
  quest_id: z.string(),
  repo_id: z.string(),
  step_id: z.string(),
  skill: z.string(),
  status: z.enum(['failure', 'denied', 'timeout', 'blocked']),
  reason: z.string().max(4000),
  ts: z.number().int().nonnegative(),
});
export type QuestStepFailedEvent = z.infer<typeof QuestStepFailedEventSchema>;


/** Runner → control plane on the runs' update channel (resent until acked): a step ran, or a replay ended. */
export const QuestStepUpdateSchema = z.object({
  type: z.literal('QUEST_STEP'),
  quest_id: RunWorkItemCommandSchema.shape.quest_id,
  step_id: StepIdSchema,
  ts: z.number().int().nonnegative(),
  outcome: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('ran'), attempt: z.number().int().min(1), result: RunResultSchema, receipt: ReceiptSchema.nullable(), head: z.string(), dta: QuestDtaProposalSchema.nullable() }),
    z.object({ kind: z.literal('replayed'), replay: ReplayResultSchema }),
  ]),
});
export type QuestStepUpdate = z.infer<typeof QuestStepUpdateSchema>;

/** The work item's attempt travels in its command so a resent outcome of an older attempt is recognised. */
export const RunWorkItemWithAttemptSchema = RunWorkItemCommandSchema.extend({ attempt: z.number().int().min(1).max(QUEST_LIMITS.MAX_RETRIES + 1) });
export type RunWorkItemWithAttempt = z.infer<typeof RunWorkItemWithAttemptSchema>;
export const ReplayStepCommandSchema = ReplayWorkItemCommandSchema.extend({ quest_id: RunWorkItemCommandSchema.shape.quest_id, step_id: StepIdSchema });
export type ReplayStepCommand = z.infer<typeof ReplayStepCommandSchema>;

// ── Control plane → browsers (/ui) ───────────────────────────────────────────────────────────────

/**
 * How much of a dry-run's patch `quest:updated` carries: what the gate card shows. A patch can be
 * half a megabyte and a quest changes state many times; the whole patch stays in REST and in the
 * receipt download.
 */
export const QUEST_EVENT_PATCH_PREVIEW_CHARS = 4_000;

/** A step as pushed live: the receipt without its patch (the download has it), the proposal's patch cut to a preview. */
export const QuestStepViewSchema = QuestStepSummarySchema.extend({
  receipt: ReceiptSchema.omit({ patch: true }).nullable(),
  proposal: QuestDtaProposalSchema.extend({ patch_truncated: z.boolean().optional() }).nullable(),
});
export type QuestStepView = z.infer<typeof QuestStepViewSchema>;

/**
 * /ui `quest:updated`: the quest as it is now (state, reason, every step's state, results, receipt
 * hashes, replay answers), pushed to the org's browsers at each change. A REST QuestSummary is a
 * QuestUpdated too, so the page keeps one list of either in its cache.
 */
export const QuestUpdatedSchema = QuestSummarySchema.extend({ steps: z.array(QuestStepViewSchema) });
export type QuestUpdated = z.infer<typeof QuestUpdatedSchema>;

export function questUpdated(q: QuestSummary): QuestUpdated {
  return {
    ...q,
    steps: q.steps.map((s) => {
      const receipt = s.receipt ? (({ patch: _patch, ...rest }) => rest)(s.receipt) : null;
      const proposal = s.proposal && s.proposal.patch.length > QUEST_EVENT_PATCH_PREVIEW_CHARS ? { ...s.proposal, patch: s.proposal.patch.slice(0, QUEST_EVENT_PATCH_PREVIEW_CHARS), patch_truncated: true } : s.proposal;
      return { ...s, receipt, proposal };
    }),
  };
}
/**
 * `workitem:run-level`: one DAG level of a quest — its independent steps, run at the same time in
 * worktrees of their own from the quest branch, then merged into it in step id order. Each step's
 * outcome comes back as its own QUEST_STEP update once the whole level is merged.
 */
export const RunWorkItemLevelCommandSchema = RunWorkItemCommandSchema.omit({ step_id: true, work_item: true }).extend({
  items: z
    .array(z.object({ step_id: StepIdSchema, work_item: WorkItemSchema, attempt: z.number().int().min(1).max(QUEST_LIMITS.MAX_RETRIES + 1) }))
    .min(1)
    .max(QUEST_LIMITS.MAX_STEPS)
    .refine((items) => new Set(items.map((i) => i.step_id)).size === items.length, 'each step once per level'),
});
export type RunWorkItemLevelCommand = z.infer<typeof RunWorkItemLevelCommandSchema>;
