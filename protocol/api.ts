import { z } from 'zod';
import { ProviderIdSchema, RepoIdSchema, RoomPathSchema } from './world';
import type { RepoSummary, RunnerSummary, SessionSummary } from './ui';

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
}
