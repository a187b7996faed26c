import { z } from 'zod';

/** What a person can be told about (issue 19 item 2). A typed kind: sources name one of these. */
export const NotificationKindSchema = z.enum(['approval_waiting', 'session_waiting_input', 'patrol_red', 'quest_step_failed']);
export type NotificationKind = z.infer<typeof NotificationKindSchema>;
export const NOTIFICATION_KINDS = NotificationKindSchema.options;

/** One inbox entry. `action_link`: the signed one-time approve/deny link (approval_waiting, approvers only). */
export const NotificationSummarySchema = z.object({
  id: z.string(),
  kind: NotificationKindSchema,
  title: z.string(),
  body: z.string(),
  link: z.string(),
  approval_id: z.string().nullable(),
  action_link: z.string().nullable(),
  created_at: z.string(),
  read: z.boolean(),
});
export type NotificationSummary = z.infer<typeof NotificationSummarySchema>;

/** GET/PUT /api/notifications/settings — per user, per org. */
export const NotificationSettingsSchema = z.object({
  kinds: z.array(NotificationKindSchema).max(NOTIFICATION_KINDS.length),
  /** Show browser (OS) notifications; permission is asked when this is turned on, never on load. */
  browser: z.boolean(),
});
export type NotificationSettings = z.infer<typeof NotificationSettingsSchema>;

/** POST /api/org-webhooks — an admin adds an outgoing webhook. */
export const OutgoingWebhookBodySchema = z.object({
  url: z
    .string()
    .trim()
    .url('must be a URL')
    .max(2000)
    .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL'),
  kinds: z.array(NotificationKindSchema).min(1, 'pick at least one kind').max(NOTIFICATION_KINDS.length),
});

export const OutgoingWebhookSummarySchema = z.object({
  id: z.string(),
  url: z.string(),
  kinds: z.array(NotificationKindSchema),
  enabled: z.boolean(),
  created_at: z.string(),
  /** Shown once, when the webhook is made: the receiver checks X-AV-Signature-256 with it. */
  secret: z.string().optional(),
});
export type OutgoingWebhookSummary = z.infer<typeof OutgoingWebhookSummarySchema>;

export const WebhookDeliverySummarySchema = z.object({
  id: z.string(),
  webhook_id: z.string(),
  kind: NotificationKindSchema,
  state: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  last_status: z.number().int().nullable(),
  last_error: z.string().nullable(),
  created_at: z.string(),
  delivered_at: z.string().nullable(),
});
export type WebhookDeliverySummary = z.infer<typeof WebhookDeliverySummarySchema>;

/** POST /api/approval-links/decide — the token is the whole credential; who decides comes from it. */
export const ApprovalLinkDecideBodySchema = z.object({
  token: z.string().min(10).max(2000),
  decision: z.enum(['allow', 'deny']),
});

/** "Always allow this": a suggested policy rule, shown as a diff of the org policy. */
export const PolicySuggestionSummarySchema = z.object({
  id: z.string(),
  category: z.string(),
  rule: z.string(),
  allow_count: z.number().int(),
  state: z.enum(['offered', 'applied', 'dismissed']),
  /** Unified diff of the org policy (JSON) before → after. */
  diff: z.string(),
  created_at: z.string(),
  decided_by: z.string().nullable(),
});
export type PolicySuggestionSummary = z.infer<typeof PolicySuggestionSummarySchema>;

export const PolicySuggestionDecideBodySchema = z.object({ decision: z.enum(['apply', 'dismiss']) });
