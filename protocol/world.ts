import { z } from 'zod';

export const SessionIdSchema = z.string().regex(/^sess_[A-Za-z0-9_-]{6,64}$/, 'must be a session id (sess_…)');
export const RepoIdSchema = z.string().regex(/^repo_[A-Za-z0-9_-]{6,64}$/, 'must be a repository id (repo_…)');
export const OrgIdSchema = z.string().regex(/^org_[A-Za-z0-9_-]{3,64}$/, 'must be an org id (org_…)');

/** A room path: a directory of the repository, relative, "/"-separated, '' for the root. */
export const RoomPathSchema = z
  .string()
  .max(1024)
  .refine((p) => p === '' || (!p.startsWith('/') && !p.endsWith('/') && !p.split('/').some((s) => s === '' || s === '.' || s === '..')), {
    message: 'must be a relative directory path without "..", or empty for the root',
  });

export const RepoRefSchema = z.object({
  provider: z.string().min(1).max(40), // github | gitlab | git | local
  owner: z.string().max(200),
  name: z.string().min(1).max(200),
});
export type RepoRef = z.infer<typeof RepoRefSchema>;

/** One directory of a repository's tree, with how many files sit directly in it. */
export const RepoDirSchema = z.object({ path: RoomPathSchema, files: z.number().int().min(0) });
export type RepoDir = z.infer<typeof RepoDirSchema>;

/** What a runner reports after scanning a repository; the village layout is a pure function of it. */
export const RepoTreeSchema = z.object({
  default_branch: z.string().min(1),
  head_sha: z.string().regex(/^[0-9a-f]{7,64}$/),
  dirs: z.array(RepoDirSchema).max(20000),
  truncated: z.boolean(),
});
export type RepoTree = z.infer<typeof RepoTreeSchema>;

export const ProviderIdSchema = z.enum(['shell', 'claude', 'codex', 'gemini']);
export type ProviderId = z.infer<typeof ProviderIdSchema>;

export const SessionStateSchema = z.enum([
  'CREATED',
  'PREPARING_WORKSPACE',
  'STARTING_PROVIDER',
  'RUNNING',
  'WAITING_FOR_APPROVAL',
  'PAUSED_BY_HUMAN',
  'STOPPING',
  'COMPLETED',
  'FAILED',
]);
export type SessionState = z.infer<typeof SessionStateSchema>;

export const TERMINAL_STATES: readonly SessionState[] = ['COMPLETED', 'FAILED'];

// The lifecycle's transition table (canTransition) lives in lifecycle.ts.
