import { z } from 'zod';

/**
 * Deterministic tool adapters (DTAs): the common contract of deterministic-tool-adapters.md
 * ("DTA Contract"). A planner or an agent *requests* a side effect with an invocation; the runner
 * answers with JSON only, and an independent verifier re-measures from the files before anything
 * downstream may rely on it (`ok && verifier.passed`).
 */

export const DTA_TOOLS = ['link_updater', 'json_schema_migrator', 'rename_refactor', 'intra_repo_link_fixer'] as const;
export const DtaToolSchema = z.enum(DTA_TOOLS);
export type DtaTool = z.infer<typeof DtaToolSchema>;

export const DTA_LIMITS = {
  /** The contract's example budget: a typical repository (≤ 5k files) on a laptop. */
  DEFAULT_MAX_FILES: 5000,
  MAX_FILES: 100_000,
  DEFAULT_TIMEOUT_MS: 300_000,
  MAX_TIMEOUT_MS: 3_600_000,
  DEFAULT_SEED: 42,
} as const;

const GlobSchema = z.string().trim().min(1).max(1000);

/** Invocation (tool input): structured JSON only, no free text. */
export const DtaInvocationSchema = z
  .object({
    tool: DtaToolSchema,
    version: z.literal('1.0'),
    mode: z.enum(['dry-run', 'apply']),
    target: z
      .object({
        /** A git work tree; globs are relative to its top level. */
        repo_path: z.string().min(1).max(4096),
        glob: z.union([GlobSchema, z.array(GlobSchema).min(1).max(50)]).optional(),
      })
      .strict(),
    params: z.record(z.string(), z.unknown()),
    constraints: z
      .object({
        max_files: z.number().int().min(1).max(DTA_LIMITS.MAX_FILES).default(DTA_LIMITS.DEFAULT_MAX_FILES),
        timeout_ms: z.number().int().min(100).max(DTA_LIMITS.MAX_TIMEOUT_MS).default(DTA_LIMITS.DEFAULT_TIMEOUT_MS),
        seed: z.number().int().min(0).max(2 ** 31 - 1).default(DTA_LIMITS.DEFAULT_SEED),
      })
      .strict()
      .default({ max_files: DTA_LIMITS.DEFAULT_MAX_FILES, timeout_ms: DTA_LIMITS.DEFAULT_TIMEOUT_MS, seed: DTA_LIMITS.DEFAULT_SEED }),
    /**
     * For an apply after a gate: the sha256 of the dry-run's patch the approver saw. The runner
     * recomputes the proposal and refuses when it differs, so the decision binds to that patch.
     */
    expected_patch_sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  })
  .strict();
export type DtaInvocation = z.infer<typeof DtaInvocationSchema>;
export type DtaInvocationInput = z.input<typeof DtaInvocationSchema>;

/** Counts by name ("links_total": 9876): each adapter names its own. */
export const DtaCountsSchema = z.record(z.string(), z.number().int().nonnegative());
export type DtaCounts = z.infer<typeof DtaCountsSchema>;

export const DtaVerifierSchema = z.object({
  passed: z.boolean(),
  /** The checks that ran ("counts_match", "no_404s_sampled"…). */
  checks: z.array(z.string()),
  /** Each failed check with its reason in words; empty when passed. */
  failures: z.array(z.string()).default([]),
  sample_size: z.number().int().nonnegative().default(0),
  /** What the verifier measured itself (never copied from the adapter). */
  measured: z.object({ before: DtaCountsSchema, after: DtaCountsSchema }).optional(),
});
export type DtaVerifier = z.infer<typeof DtaVerifierSchema>;

export const DtaErrorSchema = z.object({
  code: z.enum(['BAD_INVOCATION', 'POLICY', 'DIRTY_TREE', 'TREE_CHANGED', 'PATCH_MISMATCH', 'TIMEOUT', 'APPLY_FAILED', 'ADAPTER_FAILED', 'VERIFY_FAILED']),
  message: z.string().max(4000),
});
export type DtaError = z.infer<typeof DtaErrorSchema>;

/** Adapter output: JSON only, no prose. */
export const DtaOutputSchema = z.object({
  /** The tool asked for (as given, when the invocation named no known tool). */
  tool: z.string().max(100),
  ok: z.boolean(),
  phase: z.enum(['dry-run', 'apply', 'verify']),
  run_id: z.string().max(100),
  baseline: DtaCountsSchema,
  proposed_changes: DtaCountsSchema,
  /** All zeros for a dry-run. */
  applied_changes: DtaCountsSchema,
  /** The files the patch changes, sorted. */
  files: z.array(z.string()).max(DTA_LIMITS.MAX_FILES),
  patch_sha256: z.string().nullable(),
  artifacts: z.array(z.string()),
  verifier: DtaVerifierSchema,
  /** Things it found and could not change (an unfixable JSON file, a link it cannot rewrite). */
  notes: z.array(z.string()).default([]),
  error: DtaErrorSchema.optional(),
});
export type DtaOutput = z.infer<typeof DtaOutputSchema>;

/** `downstream only on ok && verifier.passed` in one place. */
export function dtaPassed(out: Pick<DtaOutput, 'ok' | 'verifier'>): boolean {
  return out.ok && out.verifier.passed;
}

// ── Runs through the control plane ───────────────────────────────────────────────────────────────

export const DtaRunIdSchema = z.string().regex(/^dta_[A-Za-z0-9_-]{6,64}$/, 'a DTA run id');

export const DtaRunStatusSchema = z.enum(['queued', 'waiting_for_lock', 'proposing', 'waiting_for_approval', 'applying', 'verified', 'denied', 'failed']);
export type DtaRunStatus = z.infer<typeof DtaRunStatusSchema>;

/** POST /api/dta-runs — the repository path comes from the runner's own clone, never the body. */
export const CreateDtaRunBodySchema = z.object({
  repo_id: z.string().min(1).max(100),
  invocation: z.object({
    tool: DtaToolSchema,
    glob: z.union([GlobSchema, z.array(GlobSchema).min(1).max(50)]).optional(),
    params: z.record(z.string(), z.unknown()),
    constraints: z.object({ max_files: z.number().int().optional(), timeout_ms: z.number().int().optional(), seed: z.number().int().optional() }).optional(),
  }),
});
export type CreateDtaRunBody = z.infer<typeof CreateDtaRunBodySchema>;

/**
 * A run's artifact (`.runs/<runId>/dta/<tool>/<ts>-{baseline,proposed,applied,verify}.json`) carried
 * in its events: a control-plane run's worktree is removed when it ends, and the UI offers these
 * as downloads. `path` is relative to the worktree's top level.
 */
export const MAX_ARTIFACT_CHARS = 200_000;
export const DtaArtifactSchema = z.object({
  path: z.string().regex(/^\.runs\/dta_[A-Za-z0-9_-]+\/dta\/[a-z_]+\/[0-9TZ]+-(baseline|proposed|applied|verify)\.json$/, 'a DTA artifact path'),
  content: z.string().max(MAX_ARTIFACT_CHARS),
});
export type DtaArtifact = z.infer<typeof DtaArtifactSchema>;
const artifacts = z.array(DtaArtifactSchema).max(8).optional();

/** The DTA events a run streams (deterministic-tool-adapters.md "Observability"). */
const dtaEventBase = { run_id: DtaRunIdSchema, tool: DtaToolSchema, ts: z.number().int().nonnegative() };
export const DtaEventSchema = z.discriminatedUnion('type', [
  z.object({
    ...dtaEventBase,
    type: z.literal('dta_started'),
    branch: z.string().max(255),
    files: z.array(z.string()).max(DTA_LIMITS.MAX_FILES).default([]),
    /** The commit the run's worktree starts from: the conflict radar builds the proposal as base + patch. */
    base_commit: z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/).optional(),
  }),
  z.object({ ...dtaEventBase, type: z.literal('dta_waiting_for_lock'), held_by: z.string().max(100), paths: z.array(z.string()).max(50) }),
  z.object({ ...dtaEventBase, type: z.literal('dta_proposed'), output: DtaOutputSchema, patch: z.string().max(2_000_000), artifacts }),
  z.object({ ...dtaEventBase, type: z.literal('dta_applied'), output: DtaOutputSchema }),
  z.object({ ...dtaEventBase, type: z.literal('dta_verified'), output: DtaOutputSchema, commit_sha: z.string().regex(/^[0-9a-f]{7,64}$/).nullable(), artifacts }),
  z.object({ ...dtaEventBase, type: z.literal('dta_failed'), reason: z.string().max(4000), output: DtaOutputSchema.nullable(), artifacts }),
]);
export type DtaEvent = z.infer<typeof DtaEventSchema>;

/** Patches in events are cut here (the full patch is the run's artifact): a socket message stays small. */
export const MAX_EVENT_PATCH_CHARS = 500_000;

// ── Control plane ↔ runner ───────────────────────────────────────────────────────────────────────

/** `dta:start`: dry-run this invocation in a fresh worktree on branch `dta/<run id>`, then wait for `dta:decide`. */
export const StartDtaCommandSchema = z.object({
  run_id: DtaRunIdSchema,
  org_id: z.string().min(1).max(100),
  repo_id: z.string().min(1).max(100),
  repo_source: z.string().min(1).max(4096),
  /** Branch (or commit) the worktree starts from. */
  base_ref: z.string().min(1).max(255),
  invocation: CreateDtaRunBodySchema.shape.invocation,
});
export type StartDtaCommand = z.infer<typeof StartDtaCommandSchema>;

/**
 * `dta:decide`: the gate's answer (or the policy's, when no gate is required), bound to the
 * patch the approver saw. allow → apply → verify → commit; deny → nothing applied.
 */
export const DecideDtaCommandSchema = z.object({
  run_id: DtaRunIdSchema,
  decision: z.enum(['allow', 'deny']),
  patch_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  decided_by: z.string().max(200),
});
export type DecideDtaCommand = z.infer<typeof DecideDtaCommandSchema>;

/** Runner → control plane, over the runs' update channel (spooled until acked). */
export const DtaRunUpdateSchema = z.object({ type: z.literal('DTA_EVENT'), run_id: DtaRunIdSchema, ts: z.number().int().nonnegative(), event: DtaEventSchema });
export type DtaRunUpdate = z.infer<typeof DtaRunUpdateSchema>;

/** A DTA run as the API and the workshop show it. */
export const DtaRunSummarySchema = z.object({
  id: DtaRunIdSchema,
  repo_id: z.string(),
  runner_id: z.string().nullable(),
  tool: DtaToolSchema,
  status: DtaRunStatusSchema,
  /** Why it is in this status, in words ("waiting for lock held by dta_…"). */
  reason: z.string(),
  branch: z.string(),
  invocation: CreateDtaRunBodySchema.shape.invocation,
  gate_required: z.boolean(),
  approval_id: z.string().nullable(),
  output: DtaOutputSchema.nullable(),
  patch: z.string().nullable(),
  commit_sha: z.string().nullable(),
  files: z.array(z.string()),
  created_by: z.string(),
  created_at: z.string(),
  ended_at: z.string().nullable(),
  /** Downstream may start only when true (ok && verifier.passed after apply). */
  passed: z.boolean(),
  /** The run's dta_* events in order, each in a line of words (the full events stay in the database). */
  events: z.array(z.object({ type: z.string().max(40), ts: z.number().int().nonnegative(), detail: z.string().max(500) })).max(100).optional(),
  /** Artifact paths the run's events carried (download: GET /api/dta-runs/:id/artifacts?path=…). */
  artifacts: z.array(z.string()).max(32).optional(),
});
export type DtaRunSummary = z.infer<typeof DtaRunSummarySchema>;

/**
 * /ui `dta-run:updated`: a run changed phase (created, proposing, waiting, applying, verified,
 * denied, failed). The patch (up to megabytes) is not pushed: `has_patch` says one exists, and the
 * browser reads it once from the REST list.
 */
export const DtaRunUpdatedSchema = DtaRunSummarySchema.omit({ patch: true }).extend({ has_patch: z.boolean() });
export type DtaRunUpdated = z.infer<typeof DtaRunUpdatedSchema>;

export function dtaRunUpdated(run: DtaRunSummary): DtaRunUpdated {
  const { patch, ...rest } = run;
  return { ...rest, has_patch: patch !== null && patch !== '' };
}
