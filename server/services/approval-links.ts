import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { ApprovalLinkDecideBodySchema, describeZodError, type ApprovalSummary, type Role } from '../../protocol';
import type { Db } from '../db';
import type { ApprovalService } from './approvals';
import { requireRole, type Principal } from './auth';
import { AppError, isAppError } from './errors';

/**
 * Signed one-time approve/deny links (issue 19 item 2). A token is
 * base64url(JSON {n, a, u, o, e}) + "." + base64url(HMAC-SHA256): bound to one approval (a), one
 * approver (u) in one org (o), valid until e. Its nonce (n) is a row that is claimed once. Using
 * it still goes through approvals.decide as that person, so their role *now*, four eyes and the
 * runner's command-hash binding all apply. The link is put only in that person's own inbox and
 * browser notification, never in an org webhook (a channel is not one approver).
 */

/** Long enough to answer from a phone, shorter than the default approval timeout's worst case. */
export const APPROVAL_LINK_TTL_MS = 30 * 60_000;
/** The app's page that shows the request and asks for the click (the token rides in the #fragment, out of logs). */
export const APPROVAL_LINK_PATH = '/approval-link';

const TokenPayloadSchema = z.object({ n: z.string().min(8).max(64), a: z.string().min(1).max(100), u: z.string().min(1).max(100), o: z.string().min(1).max(100), e: z.number().int() });

export function createApprovalLinkService(db: Db, secretKey: Buffer, approvals: () => ApprovalService, opts: { ttlMs?: number } = {}) {
  // A key of its own: a token can never be replayed as any other signed thing of this server.
  const key = createHmac('sha256', secretKey).update('agent-village approval links v1').digest();
  const ttl = opts.ttlMs ?? APPROVAL_LINK_TTL_MS;
  const sign = (body: string) => createHmac('sha256', key).update(body).digest('base64url');

  function tokenFor(row: { id: string; approvalId: string; userId: string; orgId: string; expiresAt: Date }): string {
    const body = Buffer.from(JSON.stringify({ n: row.id, a: row.approvalId, u: row.userId, o: row.orgId, e: row.expiresAt.getTime() })).toString('base64url');
    return `${body}.${sign(body)}`;
  }

  /** The signature and the shape; expiry and use are checked against the row. */
  function read(token: string): z.infer<typeof TokenPayloadSchema> {
    const [body, mac, extra] = token.split('.');
    const bad = () => new AppError('UNAUTHORIZED', 'This approval link is not valid (it was changed or is not one of ours).');
    if (!body || !mac || extra !== undefined) throw bad();
    const want = Buffer.from(sign(body));
    const got = Buffer.from(mac);
    if (want.length !== got.length || !timingSafeEqual(want, got)) throw bad();
    const parsed = TokenPayloadSchema.safeParse((() => {
      try {
        return JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        return null;
      }
    })());
    if (!parsed.success) throw bad();
    return parsed.data;
  }

  /** The person the link was made for, with the role they have in that org now. */
  async function approverNow(orgId: string, userId: string): Promise<Principal> {
    const m = await db.membership.findUnique({ where: { orgId_userId: { orgId, userId } }, include: { user: true, org: true } });
    if (!m) throw new AppError('FORBIDDEN', 'The person this link was made for is no longer a member of the organisation.');
    const p: Principal = { userId, email: m.user.email, name: m.user.name, orgId, orgName: m.org.name, role: m.role as Role, mustChangePassword: m.user.mustChangePassword };
    requireRole(p, 'approver');
    return p;
  }

  async function usable(token: string) {
    const t = read(token);
    const row = await db.approvalLink.findUnique({ where: { id: t.n } });
    if (!row || row.approvalId !== t.a || row.userId !== t.u || row.orgId !== t.o) throw new AppError('UNAUTHORIZED', 'This approval link is not valid.');
    if (row.usedAt) throw new AppError('CONFLICT', 'This approval link was already used; it works once.');
    if (row.expiresAt.getTime() <= Date.now()) throw new AppError('UNAUTHORIZED', 'This approval link has expired; decide from the approvals page instead.');
    return row;
  }

  return {
    /** A fresh link for one approver and one approval. */
    async issue(orgId: string, approvalId: string, userId: string): Promise<string> {
      const row = await db.approvalLink.create({
        data: { id: randomBytes(16).toString('base64url'), orgId, approvalId, userId, expiresAt: new Date(Date.now() + ttl) },
      });
      return tokenFor(row);
    },

    /** The token of an unused, unexpired link (the inbox shows it again); null otherwise. */
    async tokenOf(orgId: string, approvalId: string, userId: string): Promise<string | null> {
      const row = await db.approvalLink.findFirst({ where: { orgId, approvalId, userId, usedAt: null, expiresAt: { gt: new Date() } }, orderBy: { createdAt: 'desc' } });
      return row ? tokenFor(row) : null;
    },

    /** What the link would decide, for the page to show before the click (nothing is used up). */
    async preview(token: string): Promise<ApprovalSummary> {
      const row = await usable(token);
      await approverNow(row.orgId, row.userId);
      return approvals().one(row.orgId, row.approvalId);
    },

    /**
     * Claims the link (once, atomically) and decides as its approver. When the decision could
     * not be made (the runner is offline) the claim is released: nothing happened, so the link
     * still works until it expires.
     */
    async decide(input: unknown): Promise<ApprovalSummary> {
      const parsed = ApprovalLinkDecideBodySchema.safeParse(input);
      if (!parsed.success) throw new AppError('BAD_REQUEST', `Bad request: ${describeZodError(parsed.error)}`);
      const row = await usable(parsed.data.token);
      const p = await approverNow(row.orgId, row.userId);
      const claim = await db.approvalLink.updateMany({ where: { id: row.id, usedAt: null }, data: { usedAt: new Date() } });
      if (!claim.count) throw new AppError('CONFLICT', 'This approval link was already used; it works once.');
      try {
        return await approvals().decide(p, row.approvalId, parsed.data.decision, 'decided from a one-time link');
      } catch (err) {
        if (isAppError(err) && err.code === 'RUNNER_ERROR') await db.approvalLink.update({ where: { id: row.id }, data: { usedAt: null } });
        throw err;
      }
    },
  };
}

export type ApprovalLinkService = ReturnType<typeof createApprovalLinkService>;
