import { z } from 'zod';
import { ApprovalCategorySchema, ApprovalContextSchema } from './events';

/** An approval request as the inbox and the sprite card show it. */
export const ApprovalSummarySchema = z.object({
  id: z.string(),
  session_id: z.string(),
  session_title: z.string(),
  repo_id: z.string(),
  room_path: z.string(),
  category: ApprovalCategorySchema,
  summary: z.string(),
  risk: z.enum(['low', 'medium', 'high']),
  context: ApprovalContextSchema,
  state: z.enum(['pending', 'allowed', 'denied', 'expired']),
  requested_at: z.string(),
  expires_at: z.string(),
  decided_by: z.string().nullable(),
  decided_at: z.string().nullable(),
  note: z.string().nullable(),
  reason: z.string().nullable(),
});
export type ApprovalSummary = z.infer<typeof ApprovalSummarySchema>;

/** POST /api/approvals/:id/decide — who decides comes from the login, never from this body. */
export const DecideApprovalBodySchema = z.object({
  decision: z.enum(['allow', 'deny']),
  note: z.string().trim().max(2000).optional(),
});

/** PUT /api/secrets/:name */
export const SecretBodySchema = z.object({ value: z.string().min(1, 'the value is empty').max(10_000) });

/**
 * PATCH /api/secrets/:name — put the secret into every new session's environment (the agent can
 * then read it; off: only an approved `av-secret NAME -- cmd` reaches it).
 */
export const SecretInjectBodySchema = z.object({ inject_into_sessions: z.boolean() });
