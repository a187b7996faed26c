import { createHash, randomBytes } from 'node:crypto';
import { NotificationKindSchema, OutgoingWebhookBodySchema, describeZodError, type NotificationKind, type OutgoingWebhookSummary, type WebhookDeliverySummary } from '../../protocol';
import type { Db } from '../db';
import type { AuditService } from './audit';
import type { LeaseService } from './leases';
import { requireRole, type Principal } from './auth';
import { AppError, notFound } from './errors';
import { decrypt, encrypt } from './secrets';
import { signBody } from './webhook-signature';
import { checkWebhookTarget, postToWebhook } from './webhook-target';

/**
 * Outgoing webhooks per org (issue 19 item 2): Slack-compatible JSON (`text` + `blocks`, so a
 * Slack incoming-webhook URL works as is), signed like GitHub signs its deliveries — HMAC-SHA256
 * of the exact body in `X-AV-Signature-256` — retried with exponential backoff, every attempt
 * kept in a delivery log with its HTTP status.
 */

export const SIGNATURE_HEADER = 'x-av-signature-256';
export const EVENT_HEADER = 'x-av-event';
export const DELIVERY_HEADER = 'x-av-delivery';
/** Attempts per delivery before it is marked failed (the first try included). */
export const DEFAULT_MAX_ATTEMPTS = 6;
/** First retry after 2 s, then ×4: 2 s, 8 s, 32 s, ~2 min, ~8.5 min — a receiver's short outage is ridden out. */
export const DEFAULT_BACKOFF_BASE_MS = 2_000;
const BACKOFF_FACTOR = 4;
/** A receiver that hangs is an attempt that failed, not a stuck queue. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/**
 * How long one node's claim on a delivery lasts: longer than an attempt can take (the receiver's
 * timeout plus the row updates), so a claim never lapses under a live attempt; a node that died
 * mid-attempt blocks the delivery this long at most.
 */
const DELIVERY_CLAIM_MS = DELIVERY_TIMEOUT_MS * 6;
/** Lease names of delivery claims (table Lease, shared by every node). */
export const deliveryClaimName = (id: string) => `webhook-delivery:${id}`;
/** A timer may fire a little before the due time it was set for (clock granularity): still due. */
const DUE_SLACK_MS = 100;
/** Kept in the log: enough of an error to say what went wrong. */
const MAX_ERROR_CHARS = 500;
/** settled(): how often to look again while a retry waits for its backoff. */
const SETTLED_POLL_MS = 10;
/** Webhooks per org: a list an admin can read, and a bounded fan-out per event. */
const MAX_WEBHOOKS_PER_ORG = 20;

export interface DeliveryOptions {
  /** Delay before attempt n+1 after n failed attempts (n ≥ 1). Tests pass () => 0: no real waits. */
  backoffMs?: (failedAttempts: number) => number;
  maxAttempts?: number;
  timeoutMs?: number;
  /** Allow webhook URLs on loopback, link-local and private addresses (AGENT_VILLAGE_ALLOW_PRIVATE_WEBHOOKS). */
  allowPrivateTargets?: boolean;
}

export const exponentialBackoff = (failed: number) => DEFAULT_BACKOFF_BASE_MS * BACKOFF_FACTOR ** (failed - 1);

export interface OutgoingMessage {
  kind: NotificationKind;
  title: string;
  body: string;
  /** An absolute URL into the app (never a one-time approval link: a channel is not one approver). */
  url: string | null;
  /** Deduplicates a resent runner event: one delivery per webhook per key. */
  key: string;
}

/** The Slack-compatible body: `text` for clients that show only that, `blocks` for the rest, `agent_village` for machines. */
export function slackPayload(m: OutgoingMessage, deliveryId: string): string {
  const text = `*${m.title}*\n${m.body}${m.url ? `\n<${m.url}|Open in Agent Village>` : ''}`;
  return JSON.stringify({
    text,
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }],
    agent_village: { kind: m.kind, title: m.title, body: m.body, url: m.url, delivery_id: deliveryId },
  });
}

type DeliveryRow = { id: string; webhookId: string; kind: string; state: string; attempts: number; lastStatus: number | null; lastError: string | null; createdAt: Date; deliveredAt: Date | null };

function deliverySummary(d: DeliveryRow): WebhookDeliverySummary {
  return {
    id: d.id,
    webhook_id: d.webhookId,
    kind: NotificationKindSchema.parse(d.kind),
    state: d.state as WebhookDeliverySummary['state'],
    attempts: d.attempts,
    last_status: d.lastStatus,
    last_error: d.lastError,
    created_at: d.createdAt.toISOString(),
    delivered_at: d.deliveredAt?.toISOString() ?? null,
  };
}

const kindsOf = (json: string): NotificationKind[] => NotificationKindSchema.array().catch([]).parse(JSON.parse(json));

/** 2xx delivered; 408, 429 and 5xx are worth another try; any other answer will not change. */
const retryable = (status: number) => status === 408 || status === 429 || status >= 500;

/**
 * `leases` makes delivery safe with several nodes (issue 18): every attempt first claims its
 * delivery with a lease in the database, so two nodes that resumed the same pending delivery
 * after a restart (or whose retry timers fire together) never send it twice.
 */
export function createOutgoingWebhookService(db: Db, key: Buffer, audit: AuditService, leases: LeaseService, opts: DeliveryOptions = {}) {
  const backoff = opts.backoffMs ?? exponentialBackoff;
  const maxAttempts = opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const allowPrivate = opts.allowPrivateTargets ?? false;
  const timers = new Set<NodeJS.Timeout>();
  /** Deliveries being attempted now: a timer and a resume never send one twice at once. */
  const inFlight = new Map<string, Promise<void>>();
  let closed = false;

  function schedule(id: string, delayMs: number) {
    if (closed) return;
    const t = setTimeout(() => {
      timers.delete(t);
      void attempt(id);
    }, delayMs);
    t.unref();
    timers.add(t);
  }

  function attempt(id: string): Promise<void> {
    const running = inFlight.get(id);
    if (running) return running;
    const p = send(id).finally(() => inFlight.delete(id));
    inFlight.set(id, p);
    return p;
  }

  /** One attempt under this node's claim; without the claim another node is attempting it now. */
  async function send(id: string): Promise<void> {
    const claim = await leases.take(deliveryClaimName(id), DELIVERY_CLAIM_MS, { exclusive: true });
    if (!claim) {
      // The node attempting it finishes or schedules its retry; look again once its claim would
      // have lapsed, in case that node died meanwhile.
      schedule(id, DELIVERY_CLAIM_MS);
      return;
    }
    try {
      await sendClaimed(id);
    } finally {
      await leases.release(claim).catch((err) => console.error(`[server] releasing the claim on webhook delivery ${id}`, err));
    }
  }

  async function sendClaimed(id: string): Promise<void> {
    // Read under the claim: what another node did before we got it (delivered, rescheduled) counts.
    const d = await db.webhookDelivery.findUnique({ where: { id } });
    if (!d || d.state !== 'pending') return;
    const due = d.nextAttemptAt?.getTime() ?? 0;
    if (due > Date.now() + DUE_SLACK_MS) {
      // Another node attempted it meanwhile and set the next retry: wait for that, not a second try now.
      schedule(id, due - Date.now());
      return;
    }
    const hook = await db.outgoingWebhook.findUnique({ where: { id: d.webhookId } });
    if (!hook || !hook.enabled) {
      await db.webhookDelivery.update({ where: { id }, data: { state: 'failed', lastError: 'the webhook was removed or disabled', nextAttemptAt: null } });
      return;
    }
    let status: number | null = null;
    let error: string | null = null;
    try {
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'AgentVillage-Webhook/1',
        [SIGNATURE_HEADER]: signBody(decrypt(key, hook.secret), d.payload),
        [EVENT_HEADER]: d.kind,
        [DELIVERY_HEADER]: d.id,
      };
      status = (await postToWebhook(hook.url, { headers, body: d.payload, signal: AbortSignal.timeout(timeoutMs) }, allowPrivate)).status;
      if (status < 200 || status >= 300) error = `HTTP ${status}`;
    } catch (err) {
      error = (err instanceof Error ? (err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message) : String(err)).slice(0, MAX_ERROR_CHARS);
    }
    const attempts = d.attempts + 1;
    if (!error) {
      await db.webhookDelivery.update({ where: { id }, data: { state: 'delivered', attempts, lastStatus: status, lastError: null, deliveredAt: new Date(), nextAttemptAt: null } });
      return;
    }
    const again = attempts < maxAttempts && (status === null || retryable(status));
    const delay = again ? backoff(attempts) : 0;
    await db.webhookDelivery.update({
      where: { id },
      data: { state: again ? 'pending' : 'failed', attempts, lastStatus: status, lastError: error, nextAttemptAt: again ? new Date(Date.now() + delay) : null },
    });
    if (again) schedule(id, delay);
  }

  return {
    async list(p: Principal): Promise<OutgoingWebhookSummary[]> {
      requireRole(p, 'admin');
      const rows = await db.outgoingWebhook.findMany({ where: { orgId: p.orgId }, orderBy: { createdAt: 'asc' } });
      return rows.map((w) => ({ id: w.id, url: w.url, kinds: kindsOf(w.kinds), enabled: w.enabled, created_at: w.createdAt.toISOString() }));
    },

    /** The secret is shown once, in this answer; the receiver verifies X-AV-Signature-256 with it. */
    async create(p: Principal, input: unknown): Promise<OutgoingWebhookSummary> {
      requireRole(p, 'admin');
      const parsed = OutgoingWebhookBodySchema.safeParse(input);
      if (!parsed.success) throw new AppError('BAD_REQUEST', `The webhook is not valid: ${describeZodError(parsed.error)}`);
      await checkWebhookTarget(parsed.data.url, allowPrivate);
      if ((await db.outgoingWebhook.count({ where: { orgId: p.orgId } })) >= MAX_WEBHOOKS_PER_ORG) throw new AppError('BAD_REQUEST', `An organisation can have at most ${MAX_WEBHOOKS_PER_ORG} webhooks.`);
      const secret = randomBytes(24).toString('base64url');
      const w = await db.outgoingWebhook.create({
        data: { id: `owh_${randomBytes(12).toString('base64url')}`, orgId: p.orgId, url: parsed.data.url, secret: encrypt(key, secret), kinds: JSON.stringify(parsed.data.kinds) },
      });
      await audit.record({ orgId: p.orgId, actor: p.email, action: 'webhook.outgoing_created', target: w.id, detail: { url: w.url, kinds: parsed.data.kinds } });
      return { id: w.id, url: w.url, kinds: parsed.data.kinds, enabled: true, created_at: w.createdAt.toISOString(), secret };
    },

    async remove(p: Principal, id: string): Promise<void> {
      requireRole(p, 'admin');
      const res = await db.outgoingWebhook.deleteMany({ where: { id, orgId: p.orgId } });
      if (!res.count) throw notFound('That webhook');
      await audit.record({ orgId: p.orgId, actor: p.email, action: 'webhook.outgoing_removed', target: id });
    },

    /** The delivery log, newest first. */
    async deliveries(p: Principal, webhookId?: string): Promise<WebhookDeliverySummary[]> {
      requireRole(p, 'admin');
      const rows = await db.webhookDelivery.findMany({ where: { orgId: p.orgId, ...(webhookId ? { webhookId } : {}) }, orderBy: { createdAt: 'desc' }, take: 200 });
      return rows.map(deliverySummary);
    },

    /**
     * One delivery per webhook of the org that wants this kind; the first attempt starts at once
     * (not awaited by the caller's path: a slow receiver never holds up the runner's batch).
     * Returns the delivery ids (tests wait on them).
     */
    async enqueue(orgId: string, m: OutgoingMessage): Promise<string[]> {
      const hooks = await db.outgoingWebhook.findMany({ where: { orgId, enabled: true } });
      const ids: string[] = [];
      for (const h of hooks) {
        if (!kindsOf(h.kinds).includes(m.kind)) continue;
        // A deterministic id: the same runner event resent makes no second delivery.
        const id = `whd_${createHash('sha256').update(`${h.id}\0${m.key}`).digest('base64url').slice(0, 24)}`;
        if (await db.webhookDelivery.findUnique({ where: { id }, select: { id: true } })) continue;
        await db.webhookDelivery.create({ data: { id, webhookId: h.id, orgId, kind: m.kind, payload: slackPayload(m, id), state: 'pending', nextAttemptAt: new Date() } });
        ids.push(id);
        void attempt(id).catch((err) => console.error('[server] webhook delivery failed', err));
      }
      return ids;
    },

    /** Until a delivery is no longer pending (tests, shutdown). */
    async settled(id: string): Promise<WebhookDeliverySummary> {
      for (;;) {
        await inFlight.get(id);
        const d = await db.webhookDelivery.findUniqueOrThrow({ where: { id } });
        if (d.state !== 'pending' || closed) return deliverySummary(d);
        await new Promise<void>((r) => setTimeout(r, SETTLED_POLL_MS));
      }
    },

    /** At start: deliveries a previous process left pending go out when they were due. */
    async resume(): Promise<void> {
      const rows = await db.webhookDelivery.findMany({ where: { state: 'pending' }, select: { id: true, nextAttemptAt: true } });
      for (const r of rows) schedule(r.id, Math.max(0, (r.nextAttemptAt?.getTime() ?? 0) - Date.now()));
    },

    close(): void {
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}

export type OutgoingWebhookService = ReturnType<typeof createOutgoingWebhookService>;
