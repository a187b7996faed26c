import { z } from 'zod';
import { ProviderIdSchema, RepoIdSchema, RoomPathSchema } from './world';
import type { RepoSummary, RunnerSummary, SessionSummary } from './ui';
import type { AlertSummary, RepoHealth } from './patrols';
import type { DeterministicAgent, RunSummary } from './deterministic';

export const RoleSchema = z.enum(['viewer', 'operator', 'approver', 'admin']);
export type Role = z.infer<typeof RoleSchema>;
export const ROLE_RANK: Record<Role, number> = { viewer: 0, operator: 1, approver: 2, admin: 3 };

const EmailSchema = z.string().trim().toLowerCase().email('must be an email address').max(254);
const PasswordSchema = z.string().min(8, 'must be at least 8 characters').max(200);

export const SetupBodySchema = z.object({
  email: EmailSchema,
  password: PasswordSchema,
  name: z.string().trim().min(1).max(100).optional(),
  org_name: z.string().trim().min(1).max(100).optional(),
  /** The one-time token of the first-run link the server prints (optional here so a missing one gets its own message). */
  setup_token: z.string().max(200).optional(),
});
export const LoginBodySchema = z.object({ email: EmailSchema, password: z.string().min(1).max(200) });

export const MeSchema = z.object({
  user: z.object({ id: z.string(), email: z.string(), name: z.string() }),
  org: z.object({ id: z.string(), name: z.string() }),
  role: RoleSchema,
});
export type Me = z.infer<typeof MeSchema>;

export const AddRepoBodySchema = z.object({
  source: z
    .string()
    .trim()
    .min(1, 'enter a local path or a git URL')
    .max(4096)
    .refine((s) => s.startsWith('/') || /^(https?|ssh|git|file):\/\//.test(s) || /^[\w.-]+@[\w.-]+:/.test(s), {
      message: 'must be an absolute local path or a git URL (https://, ssh://, git@host:owner/repo)',
    }),
  name: z.string().trim().min(1).max(100).optional(),
});

export const SpawnSessionBodySchema = z.object({
  repo_id: RepoIdSchema,
  room_path: RoomPathSchema,
  provider: ProviderIdSchema.default('shell'),
  title: z.string().trim().max(200).optional(),
  /** What the agent should do (sent to AI providers as their first prompt). */
  goal: z.string().trim().max(10000).optional(),
  mode: z.enum(['write', 'read_only']).default('write'),
  cols: z.number().int().min(2).max(1000).optional(),
  rows: z.number().int().min(2).max(500).optional(),
});

export const CreateRunnerTokenBodySchema = z.object({ name: z.string().trim().min(1).max(100) });

export interface WorldSnapshot {
  org: { id: string; name: string };
  repos: RepoSummary[];
  sessions: SessionSummary[];
  runners: RunnerSummary[];
  /** Open alerts from patrols: bug sprites in the rooms of the files they point to. */
  alerts: AlertSummary[];
  /** Each building's health from its recent patrol results. */
  health: RepoHealth[];
  /** Deterministic agents of the online runners (the workshop's benches). */
  agents: DeterministicAgent[];
  /** Runs in progress and the last few finished ones (the workshop's sprites). */
  runs: RunSummary[];
}

// ── Members, invites, orgs, audit ────────────────────────────────────────────────────────────

/** The signed-in user plus what the UI needs beyond `Me`: a pending password change, the other orgs. */
export const MeDetailsSchema = MeSchema.extend({
  must_change_password: z.boolean(),
  orgs: z.array(z.object({ id: z.string(), name: z.string(), role: RoleSchema })),
});
export type MeDetails = z.infer<typeof MeDetailsSchema>;

export const MemberSchema = z.object({
  user_id: z.string(),
  email: z.string(),
  name: z.string(),
  role: RoleSchema,
  must_change_password: z.boolean(),
});
export type Member = z.infer<typeof MemberSchema>;

export const InviteSummarySchema = z.object({
  id: z.string(),
  email: z.string(),
  role: RoleSchema,
  /** 'link': an invite link; 'account': a member added with a one-time password, pending first sign-in. */
  kind: z.enum(['link', 'account']),
  expires_at: z.string(),
  accepted: z.boolean(),
  created_at: z.string(),
});
export type InviteSummary = z.infer<typeof InviteSummarySchema>;

export const InviteBodySchema = z.object({ email: EmailSchema, role: RoleSchema });
/** Create a member directly: the answer carries a one-time password they must change at first login. */
export const CreateMemberBodySchema = z.object({ email: EmailSchema, name: z.string().trim().min(1).max(100), role: RoleSchema });
export const ChangeRoleBodySchema = z.object({ role: RoleSchema });
export const AcceptInviteBodySchema = z.object({
  token: z.string().min(10).max(200),
  name: z.string().trim().min(1).max(100),
  password: PasswordSchema,
});
export const ChangePasswordBodySchema = z.object({ current_password: z.string().min(1).max(200), new_password: PasswordSchema });
export const CreateOrgBodySchema = z.object({ name: z.string().trim().min(1).max(100) });
export const SwitchOrgBodySchema = z.object({ org_id: z.string().min(1).max(100) });

/** What an invite link shows before it is accepted (public: the token is the credential). */
export const InvitePreviewSchema = z.object({ email: z.string(), role: RoleSchema, org_name: z.string(), existing_account: z.boolean() });
export type InvitePreview = z.infer<typeof InvitePreviewSchema>;

/** Audit actions written today; other services add theirs (approval.*, policy.blocked) through the same record(). */
export const AUDIT_ACTIONS = [
  'auth.login',
  'auth.login_failed',
  'auth.password_changed',
  'member.invited',
  'member.invite_revoked',
  'member.joined',
  'member.created',
  'member.role_changed',
  'member.removed',
  'org.created',
  'runner_token.created',
  'runner_token.revoked',
  'runner.registered',
  'runner.takeover_refused',
  'runner.fenced',
  'runner.alert_dismissed',
  'run.started',
  'dta.started',
  'quest.created',
  'quest.started',
  'quest.gate_decided',
  'approval.requested',
  'approval.decided',
  'policy.blocked',
  'billing.plan_changed',
  'billing.plan_updated',
  'billing.over_budget',
  'patrol.setup',
  'patrol.updated',
  'patrol.run_requested',
  'webhook.secret_rotated',
  'webhook.outgoing_created',
  'webhook.outgoing_removed',
  'policy.suggestion_offered',
  'policy.suggestion_applied',
  'policy.suggestion_dismissed',
  'session.transition_refused',
  'session.redaction',
] as const;
export const AuditActionSchema = z.enum(AUDIT_ACTIONS);
export type AuditAction = z.infer<typeof AuditActionSchema>;

const IsoDateSchema = z
  .string()
  .max(40)
  .refine((s) => !Number.isNaN(Date.parse(s)), { message: 'must be a date (YYYY-MM-DD or ISO 8601)' });

/** Query string of GET /api/audit and /api/audit.csv; empty values mean "any". */
export const AuditQuerySchema = z.object({
  action: z.preprocess((v) => (v === '' ? undefined : v), AuditActionSchema.optional()),
  actor: z.preprocess((v) => (v === '' ? undefined : v), z.string().trim().max(254).optional()),
  from: z.preprocess((v) => (v === '' ? undefined : v), IsoDateSchema.optional()),
  to: z.preprocess((v) => (v === '' ? undefined : v), IsoDateSchema.optional()),
  limit: z.preprocess((v) => (v === '' || v === undefined ? undefined : Number(v)), z.number().int().min(1).max(500).optional()),
});
export type AuditQuery = z.infer<typeof AuditQuerySchema>;

export const AuditEventRowSchema = z.object({
  id: z.string(),
  ts: z.string(),
  actor: z.string(),
  action: z.string(),
  target: z.string(),
  detail: z.record(z.string(), z.unknown()),
  ip: z.string().nullable(),
});
export type AuditEventRow = z.infer<typeof AuditEventRowSchema>;

/** One line of a session's redaction receipt (GET /api/sessions/:id/redactions): names and counts, never values. */
export const SessionRedactionRowSchema = z.object({
  source: z.enum(['runner', 'control-plane']),
  rule: z.string(),
  secret_name: z.string().nullable(),
  count: z.number().int(),
  first_seq: z.number().int(),
  last_seq: z.number().int(),
});
export type SessionRedactionRow = z.infer<typeof SessionRedactionRowSchema>;
