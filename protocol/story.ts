import { z } from 'zod';
import { SessionRedactionRowSchema } from './api';
import { SessionSummarySchema } from './ui';

/** A session's story (issue 19 item 4): one page a person reads after it ended, or pastes into a PR. */
export const StoryTestRunSchema = z.object({
  command: z.string(),
  passed: z.number().int(),
  failed: z.number().int(),
  exit_code: z.number().int().nullable(),
  ts: z.number(),
});
export type StoryTestRun = z.infer<typeof StoryTestRunSchema>;

export const StoryApprovalSchema = z.object({
  id: z.string(),
  category: z.string(),
  summary: z.string(),
  risk: z.string(),
  requested_at: z.string(),
  /** pending | allowed | denied | expired */
  state: z.string(),
  decided_by: z.string().nullable(),
  decided_at: z.string().nullable(),
  note: z.string().nullable(),
});
export type StoryApproval = z.infer<typeof StoryApprovalSchema>;

export const SessionStorySchema = z.object({
  session: SessionSummarySchema,
  repo: z.object({ id: z.string(), name: z.string() }),
  ended_at: z.string().nullable(),
  /** From spawn to end (or to now while it runs). */
  duration_ms: z.number().int().nonnegative(),
  /** Rooms in the order the agent walked them, starting where it was spawned (consecutive repeats folded). */
  rooms: z.array(z.string()),
  files: z.array(z.object({ path: z.string(), added: z.number().int().nullable(), removed: z.number().int().nullable() })),
  /** The final diff as a unified patch (runner ≥ this version; null when the session changed nothing or predates it). */
  patch: z.string().nullable(),
  tests: z.array(StoryTestRunSchema),
  approvals: z.array(StoryApprovalSchema),
  redactions: z.array(SessionRedactionRowSchema),
  /** Agent-minutes metered for the session (USAGE_TICKs). */
  agent_minutes: z.number().nonnegative(),
});
export type SessionStory = z.infer<typeof SessionStorySchema>;

/** GET /api/session-history: ended sessions, newest first, optionally of one building or one room. */
export const SessionHistoryQuerySchema = z.object({
  repo_id: z.string().max(100).optional(),
  room_path: z.string().max(4096).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export type SessionHistoryQuery = z.infer<typeof SessionHistoryQuerySchema>;

export const EndedSessionSchema = SessionSummarySchema.extend({ ended_at: z.string().nullable(), repo_name: z.string() });
export type EndedSession = z.infer<typeof EndedSessionSchema>;
