import { z } from 'zod';
import { RepoIdSchema } from './world';

/**
 * Repository patrols (agent-runner.md §4.6): checks a runner runs in a read-only worktree of the
 * newest commit, on a schedule, on a push (webhook) or by hand. Their results set each building's
 * health; every failure becomes an alert (a bug sprite in the room of the file it points to).
 */
export const PATROL_KINDS = ['lint', 'test', 'build', 'deps', 'security'] as const;
export const PatrolKindSchema = z.enum(PATROL_KINDS);
export type PatrolKind = z.infer<typeof PatrolKindSchema>;

/** What people call the kinds. */
export const PATROL_KIND_LABELS: Record<PatrolKind, string> = {
  lint: 'Lint',
  test: 'Tests',
  build: 'Build',
  deps: 'Dependency check',
  security: 'Security check',
};

export const PatrolRunStatusSchema = z.enum(['queued', 'running', 'passed', 'failed', 'error', 'skipped']);
export type PatrolRunStatus = z.infer<typeof PatrolRunStatusSchema>;
export const PatrolTriggerSchema = z.enum(['schedule', 'webhook', 'manual']);
export type PatrolTrigger = z.infer<typeof PatrolTriggerSchema>;

/** A patrol command runs this long at most before it is stopped (its run ends as an error). */
export const PATROL_TIMEOUT_MS = 15 * 60_000;
/** At most this many alerts per run: a thousand lint errors make one bug per file, not a swarm. */
export const MAX_PATROL_FINDINGS = 50;
/** Webhook bodies larger than this are refused unread (GitHub caps at 25 MB; a push event is far smaller). */
export const MAX_WEBHOOK_BYTES = 1024 * 1024;
/** How much of the log an alert keeps to show beside its bug. */
export const MAX_ALERT_EXCERPT_CHARS = 4000;

const CommandSchema = z.string().trim().min(1, 'a patrol needs a command').max(4000);

/** What the control plane adds to a create-session command to make it a patrol (runner/patrols). */
export const PatrolSpecSchema = z.object({
  patrol_id: z.string().min(1).max(100),
  run_id: z.string().min(1).max(100),
  kind: PatrolKindSchema,
  /** Run non-interactively with `bash -c` in the worktree root. */
  command: CommandSchema,
  timeout_ms: z.number().int().min(1_000).max(6 * 3600_000).default(PATROL_TIMEOUT_MS),
});
export type PatrolSpec = z.infer<typeof PatrolSpecSchema>;

/** Sensible commands a runner read from the repository (package.json scripts, config files). */
export const PatrolDefaultsSchema = z.object({
  commands: z.object({
    lint: z.string().max(4000).nullable(),
    test: z.string().max(4000).nullable(),
    build: z.string().max(4000).nullable(),
    deps: z.string().max(4000).nullable(),
    security: z.string().max(4000).nullable(),
  }),
  /** Where each suggestion came from ("package.json scripts.test"), for people to check. */
  notes: z.array(z.string().max(500)).max(50),
});
export type PatrolDefaults = z.infer<typeof PatrolDefaultsSchema>;

export const RepoInspectCommandSchema = z.object({ repo_id: RepoIdSchema, source: z.string().min(1).max(4096) });
export type RepoInspectCommand = z.infer<typeof RepoInspectCommandSchema>;

// ── What the browser is told ─────────────────────────────────────────────────────────────────

export const PatrolSummarySchema = z.object({
  id: z.string(),
  repo_id: z.string(),
  kind: PatrolKindSchema,
  command: z.string(),
  schedule: z.string(),
  enabled: z.boolean(),
  /** Next scheduled run (ISO), null without a schedule or when disabled. */
  next_run_at: z.string().nullable(),
  last_status: PatrolRunStatusSchema.nullable(),
  last_run_at: z.string().nullable(),
});
export type PatrolSummary = z.infer<typeof PatrolSummarySchema>;

export const PatrolRunSummarySchema = z.object({
  id: z.string(),
  patrol_id: z.string(),
  repo_id: z.string(),
  kind: PatrolKindSchema,
  command: z.string(),
  trigger: PatrolTriggerSchema,
  triggered_by: z.string(),
  status: PatrolRunStatusSchema,
  summary: z.string(),
  /** The session that ran it: its terminal can be replayed. */
  session_id: z.string().nullable(),
  exit_code: z.number().int().nullable(),
  commit_sha: z.string().nullable(),
  tests: z.object({ passed: z.number().int(), failed: z.number().int() }).nullable(),
  findings: z.number().int(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});
export type PatrolRunSummary = z.infer<typeof PatrolRunSummarySchema>;

export const AlertSummarySchema = z.object({
  id: z.string(),
  repo_id: z.string(),
  patrol_id: z.string(),
  run_id: z.string(),
  kind: PatrolKindSchema,
  severity: z.enum(['warning', 'error']),
  message: z.string(),
  path: z.string().nullable(),
  line: z.number().int().nullable(),
  room_path: z.string(),
  excerpt: z.string(),
  state: z.enum(['open', 'resolved']),
  raised_at: z.string(),
  last_seen_at: z.string(),
  resolved_at: z.string().nullable(),
});
export type AlertSummary = z.infer<typeof AlertSummarySchema>;

/**
 * A building's health from its recent patrol results: for each enabled patrol, its last five
 * finished runs weighted 5, 4, 3, 2, 1 (the latest counts most), passed = 1, failed = 0; the
 * health is their mean. null until a patrol has finished once.
 */
export const RepoHealthSchema = z.object({
  repo_id: z.string(),
  health: z.number().min(0).max(1).nullable(),
  /** The latest finished build patrol failed: the building smokes. */
  build_failing: z.boolean(),
  open_alerts: z.number().int(),
  last_run_at: z.string().nullable(),
});
export type RepoHealth = z.infer<typeof RepoHealthSchema>;

/** Everything the patrols page shows for one repository. */
export interface RepoPatrols {
  repo_id: string;
  patrols: PatrolSummary[];
  runs: PatrolRunSummary[];
  health: RepoHealth;
  /** Whether a webhook secret exists (admins read it with GET /api/repos/:id/webhook). */
  webhook_configured: boolean;
  /** in-process (croner) or bullmq (REDIS_URL). */
  scheduler: 'in-process' | 'bullmq';
}

export interface WebhookInfo {
  /** Path on this server GitHub posts to (the page adds its origin). */
  path: string;
  secret: string;
  last_delivery_at: string | null;
}

// ── REST bodies ──────────────────────────────────────────────────────────────────────────────

export const UpdatePatrolBodySchema = z
  .object({
    command: CommandSchema.optional(),
    /** A cron expression (5 fields, or 6 with seconds); '' for none. Checked by the server. */
    schedule: z.string().trim().max(200).optional(),
    enabled: z.boolean().optional(),
  })
  .refine((b) => b.command !== undefined || b.schedule !== undefined || b.enabled !== undefined, { message: 'nothing to change' });

/** GET /api/patrol-runs?repo_id=…&patrol_id=…&limit=… */
export const PatrolRunsQuerySchema = z.object({
  repo_id: RepoIdSchema,
  patrol_id: z.preprocess((v) => (v === '' ? undefined : v), z.string().max(100).optional()),
  limit: z.preprocess((v) => (v === '' || v === undefined ? undefined : Number(v)), z.number().int().min(1).max(200).optional()),
});

/**
 * The parts of GitHub's push event we read (docs: "Webhook events and payloads", push). Unknown
 * fields are ignored; a local path may stand in clone_url for self-hosted setups and tests.
 */
export const GitPushEventSchema = z.object({
  ref: z.string().min(1).max(1000),
  after: z.string().max(100).optional(),
  deleted: z.boolean().optional(),
  repository: z.object({
    full_name: z.string().max(500).optional(),
    clone_url: z.string().max(4096).optional(),
    ssh_url: z.string().max(4096).optional(),
    git_url: z.string().max(4096).optional(),
    html_url: z.string().max(4096).optional(),
    url: z.string().max(4096).optional(),
    default_branch: z.string().max(255).optional(),
  }),
});
export type GitPushEvent = z.infer<typeof GitPushEventSchema>;
