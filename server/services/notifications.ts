import { createHash } from 'node:crypto';
import { NOTIFICATION_KINDS, NotificationKindSchema, NotificationSettingsSchema, ROLE_RANK, describeZodError, type NotificationKind, type NotificationSettings, type NotificationSummary, type Role, type RunnerEvent } from '../../protocol';
import type { Db } from '../db';
import { APPROVAL_LINK_PATH, type ApprovalLinkService } from './approval-links';
import type { Principal } from './auth';
import { AppError, notFound } from './errors';
import type { OutgoingWebhookService } from './outgoing-webhooks';
import type { Broadcaster } from './ports';

/**
 * People are told when something waits for them (issue 19 item 2): an approval waits, a session
 * waits for input, a patrol turns red, a quest step fails. Each source names a typed kind; each
 * person's settings say which kinds reach their inbox (and their browser); the org's outgoing
 * webhooks get the same events. Sources: runner events (notifyingIngest, below) and
 * questStepFailed() for the quests engine.
 */

/** Who hears of each kind when they have not chosen: the people who can act on it. */
const DEFAULT_MIN_ROLE: Record<NotificationKind, Role> = {
  approval_waiting: 'approver',
  session_waiting_input: 'operator',
  patrol_red: 'operator',
  quest_step_failed: 'operator',
};
/** The inbox shows this many, newest first. */
export const INBOX_SIZE = 50;
/** Text from events is already redacted; this only keeps a card a card. */
const MAX_BODY_CHARS = 500;

export interface NotifyInput {
  kind: NotificationKind;
  title: string;
  body: string;
  /** A path in the app ("/approvals", "/patrols"). */
  link: string;
  approvalId?: string;
  /** Who may be told: the service filters them by role and their settings. */
  recipients: { userId: string; role: Role }[];
  /** Same event, same key: a resent runner event tells nobody twice. */
  key: string;
}

const clip = (s: string) => (s.length > MAX_BODY_CHARS ? `${s.slice(0, MAX_BODY_CHARS - 1)}…` : s);

export function createNotificationService(
  db: Db,
  deps: { broadcast: () => Broadcaster; webhooks: OutgoingWebhookService; links: () => ApprovalLinkService; publicOrigin: () => string },
) {
  async function settingsOf(orgId: string, userId: string, role: Role): Promise<NotificationSettings> {
    const row = await db.notificationSetting.findUnique({ where: { orgId_userId: { orgId, userId } } });
    if (!row) return { kinds: NOTIFICATION_KINDS.filter((k) => ROLE_RANK[role] >= ROLE_RANK[DEFAULT_MIN_ROLE[k]]), browser: false };
    return { kinds: NotificationKindSchema.array().catch([]).parse(JSON.parse(row.kinds)), browser: row.browser };
  }

  async function summary(n: { id: string; orgId: string; userId: string; kind: string; title: string; body: string; link: string; approvalId: string | null; createdAt: Date; readAt: Date | null }): Promise<NotificationSummary> {
    let action: string | null = null;
    if (n.kind === 'approval_waiting' && n.approvalId && !n.readAt) {
      const pending = await db.approval.findFirst({ where: { id: n.approvalId, orgId: n.orgId, state: 'pending' }, select: { id: true } });
      const token = pending ? await deps.links().tokenOf(n.orgId, n.approvalId, n.userId) : null;
      if (token) action = `${APPROVAL_LINK_PATH}#${token}`;
    }
    return {
      id: n.id,
      kind: NotificationKindSchema.parse(n.kind),
      title: n.title,
      body: n.body,
      link: n.link,
      approval_id: n.approvalId,
      action_link: action,
      created_at: n.createdAt.toISOString(),
      read: n.readAt !== null,
    };
  }

  async function members(orgId: string): Promise<{ userId: string; role: Role }[]> {
    return (await db.membership.findMany({ where: { orgId }, select: { userId: true, role: true } })).map((m) => ({ userId: m.userId, role: m.role as Role }));
  }

  const service = {
    async settings(p: Principal): Promise<NotificationSettings> {
      return settingsOf(p.orgId, p.userId, p.role);
    },

    async saveSettings(p: Principal, input: unknown): Promise<NotificationSettings> {
      const parsed = NotificationSettingsSchema.safeParse(input);
      if (!parsed.success) throw new AppError('BAD_REQUEST', `The notification settings are not valid: ${describeZodError(parsed.error)}`);
      const data = { kinds: JSON.stringify([...new Set(parsed.data.kinds)]), browser: parsed.data.browser };
      await db.notificationSetting.upsert({ where: { orgId_userId: { orgId: p.orgId, userId: p.userId } }, create: { orgId: p.orgId, userId: p.userId, ...data }, update: data });
      return settingsOf(p.orgId, p.userId, p.role);
    },

    async inbox(p: Principal): Promise<{ items: NotificationSummary[]; unread: number }> {
      const rows = await db.notification.findMany({ where: { orgId: p.orgId, userId: p.userId }, orderBy: { createdAt: 'desc' }, take: INBOX_SIZE });
      const unread = await db.notification.count({ where: { orgId: p.orgId, userId: p.userId, readAt: null } });
      return { items: await Promise.all(rows.map(summary)), unread };
    },

    /** Marks one entry read, or all of them when `id` is absent. */
    async markRead(p: Principal, id?: string): Promise<void> {
      const res = await db.notification.updateMany({ where: { orgId: p.orgId, userId: p.userId, readAt: null, ...(id ? { id } : {}) }, data: { readAt: new Date() } });
      if (id && !res.count && !(await db.notification.findFirst({ where: { id, orgId: p.orgId, userId: p.userId }, select: { id: true } }))) throw notFound('That notification');
    },

    /** The one way anything tells people: inboxes (by role and settings), live browsers, the org's webhooks. */
    async notify(orgId: string, n: NotifyInput): Promise<void> {
      const body = clip(n.body);
      for (const r of n.recipients) {
        const s = await settingsOf(orgId, r.userId, r.role);
        if (!s.kinds.includes(n.kind)) continue;
        const id = `ntf_${createHash('sha256').update(`${orgId}\0${r.userId}\0${n.key}`).digest('base64url').slice(0, 24)}`;
        if (await db.notification.findUnique({ where: { id }, select: { id: true } })) continue;
        const row = await db.notification.create({ data: { id, orgId, userId: r.userId, kind: n.kind, title: n.title, body, link: n.link, approvalId: n.approvalId ?? null } });
        // An approver's entry carries their own one-time link to allow or deny.
        if (n.approvalId && ROLE_RANK[r.role] >= ROLE_RANK.approver) await deps.links().issue(orgId, n.approvalId, r.userId);
        deps.broadcast().notificationCreated(r.userId, await summary(row));
      }
      await deps.webhooks.enqueue(orgId, { kind: n.kind, title: n.title, body, url: `${deps.publicOrigin()}${n.link}`, key: n.key });
    },

    /** Runner events that mean "someone should look" (after they are stored and redacted). */
    async onRunnerEvents(orgId: string, events: RunnerEvent[]): Promise<void> {
      for (const e of events) {
        if (e.type === 'APPROVAL_REQUESTED') {
          const s = await db.session.findUnique({ where: { id: e.session_id }, select: { title: true, createdById: true } });
          // Four eyes is the decider's check; everyone who could decide hears of it.
          await service.notify(orgId, {
            kind: 'approval_waiting',
            title: `Approval needed: ${e.summary}`,
            body: `${e.context.command}${s?.title ? ` — session “${s.title}”` : ''}${e.context.changed_files !== undefined ? ` — ${e.context.changed_files} changed file${e.context.changed_files === 1 ? '' : 's'}` : ''}`,
            link: '/approvals',
            approvalId: e.approval_id,
            recipients: (await members(orgId)).filter((m) => ROLE_RANK[m.role] >= ROLE_RANK.approver),
            key: `approval:${e.approval_id}`,
          });
        } else if (e.type === 'AGENT_ACTIVITY' && e.activity === 'waiting_for_input') {
          const s = await db.session.findUnique({ where: { id: e.session_id }, select: { title: true, createdById: true } });
          const starter = (await members(orgId)).filter((m) => m.userId === s?.createdById);
          await service.notify(orgId, {
            kind: 'session_waiting_input',
            title: `Waiting for you: ${s?.title ?? e.session_id}`,
            body: e.detail,
            link: `/?session=${encodeURIComponent(e.session_id)}`,
            recipients: starter,
            key: `input:${e.session_id}:${e.seq}`,
          });
        } else if (e.type === 'PATROL_FINISHED' && e.status === 'failed') {
          // "Turns red": a patrol already failing does not ring again on every run.
          const previous = await db.patrolRun.findFirst({
            where: { patrolId: e.patrol_id, id: { not: e.run_id }, status: { in: ['passed', 'failed'] } },
            orderBy: { createdAt: 'desc' },
            select: { status: true },
          });
          if (previous?.status === 'failed') continue;
          const p = await db.patrol.findUnique({ where: { id: e.patrol_id }, select: { repoId: true } });
          const repo = p ? await db.repo.findUnique({ where: { id: p.repoId }, select: { name: true } }) : null;
          await service.notify(orgId, {
            kind: 'patrol_red',
            title: `Patrol failed: ${e.kind}${repo ? ` on ${repo.name}` : ''}`,
            body: e.summary,
            link: '/patrols',
            recipients: await members(orgId),
            key: `patrol:${e.run_id}`,
          });
        }
      }
    },

    /**
     * Hook for the quests engine (issue 16): call when a quest step fails. `userId`: who started
     * the quest (null: every operator). Kept here so the quests code needs one line.
     */
    async questStepFailed(orgId: string, q: { questId: string; stepId: string; title: string; message: string; userId: string | null }): Promise<void> {
      const all = await members(orgId);
      await service.notify(orgId, {
        kind: 'quest_step_failed',
        title: `Quest step failed: ${q.title}`,
        body: q.message,
        link: `/quests?quest=${encodeURIComponent(q.questId)}`,
        recipients: q.userId ? all.filter((m) => m.userId === q.userId) : all,
        key: `quest:${q.questId}:${q.stepId}`,
      });
    },
  };
  return service;
}

export type NotificationService = ReturnType<typeof createNotificationService>;

/**
 * Wraps the event service's ingest: after a batch is stored, its events may notify people. A
 * failure to notify is logged, never a reason for the runner to resend a stored batch.
 */
export function notifyingIngest<E extends { ingest(runner: { id: string; orgId: string; name: string }, events: RunnerEvent[]): Promise<unknown> }>(events: E, notifications: () => NotificationService): E {
  // Not an async function, and only the events that can notify are kept until the batch is
  // stored: the batch's terminal output is garbage once viewers have it (issue 17).
  const ingest = (runner: { id: string; orgId: string; name: string }, batch: RunnerEvent[]) => {
    const rest = batch.filter((e) => e.type !== 'TERMINAL_CHUNK');
    return events.ingest(runner, batch).then(async (result) => {
      await notifications()
        .onRunnerEvents(runner.orgId, rest)
        .catch((err) => console.error('[server] notifying failed', err));
      return result;
    });
  };
  return { ...events, ingest: ingest as E['ingest'] };
}
