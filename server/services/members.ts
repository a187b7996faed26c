import { randomBytes } from 'node:crypto';
import type { InvitePreview, InviteSummary, Member, Role } from '../../protocol';
import type { Db } from '../db';
import { actorOf, type AuditService } from './audit';
import { hashPassword, requireRole, sha256, verifyPassword, type AuthService, type Principal } from './auth';
import { AppError, notFound } from './errors';
import { newId } from './ids';
import type { MemberEvents } from './member-events';

/** An invite link is good for a week; after that the admin sends a new one. */
export const INVITE_TTL_MS = 7 * 24 * 3600 * 1000;
/** 16 random bytes: a one-time password nobody guesses before its owner replaces it. */
const ONE_TIME_PASSWORD_BYTES = 16;

const LAST_ADMIN = 'This is the last admin of the organisation: make another member admin first.';

type Ctx = { ip?: string | null };

function inviteSummary(i: { id: string; email: string; role: string; kind: string; expiresAt: Date; acceptedAt: Date | null; createdAt: Date }): InviteSummary {
  return {
    id: i.id,
    email: i.email,
    role: i.role as Role,
    kind: i.kind === 'account' ? 'account' : 'link',
    expires_at: i.expiresAt.toISOString(),
    accepted: i.acceptedAt !== null,
    created_at: i.createdAt.toISOString(),
  };
}

/** Members of an org, invites, and orgs themselves. Every call is scoped by the principal's org. */
export function createMemberService(db: Db, auth: AuthService, audit: AuditService, events: MemberEvents) {
  async function findValidInvite(token: string) {
    const invite = await db.invite.findUnique({ where: { tokenHash: sha256(token) }, include: { org: true } });
    if (!invite || invite.acceptedAt) throw new AppError('NOT_FOUND', 'This invite link is not valid (it was used or revoked).');
    if (invite.expiresAt.getTime() < Date.now()) throw new AppError('NOT_FOUND', 'This invite link has expired: ask an admin for a new one.');
    return invite;
  }

  return {
    async list(p: Principal): Promise<{ members: Member[]; invites: InviteSummary[] }> {
      requireRole(p, 'admin');
      const [ms, invites] = await Promise.all([
        db.membership.findMany({ where: { orgId: p.orgId }, include: { user: true }, orderBy: { user: { email: 'asc' } } }),
        db.invite.findMany({ where: { orgId: p.orgId, acceptedAt: null, expiresAt: { gt: new Date() } }, orderBy: { createdAt: 'desc' } }),
      ]);
      return {
        members: ms.map((m) => ({
          user_id: m.userId,
          email: m.user.email,
          name: m.user.name,
          role: m.role as Role,
          must_change_password: m.user.mustChangePassword,
        })),
        invites: invites.map(inviteSummary),
      };
    },

    /** An invite link for an email and role; the token is in the answer only, stored as a hash. */
    async invite(p: Principal, email: string, role: Role, ctx: Ctx = {}): Promise<{ invite: InviteSummary; token: string }> {
      requireRole(p, 'admin');
      const existing = await db.membership.findFirst({ where: { orgId: p.orgId, user: { email } } });
      if (existing) throw new AppError('CONFLICT', `${email} is already a member of this organisation.`);
      const token = `avi_${randomBytes(32).toString('base64url')}`;
      const row = await db.invite.create({
        data: { id: newId('inv'), orgId: p.orgId, email, role, tokenHash: sha256(token), expiresAt: new Date(Date.now() + INVITE_TTL_MS), createdBy: p.userId },
      });
      await audit.record({ orgId: p.orgId, actor: actorOf(p), action: 'member.invited', target: email, detail: { role, invite_id: row.id }, ip: ctx.ip });
      return { invite: inviteSummary(row), token };
    },

    async revokeInvite(p: Principal, inviteId: string, ctx: Ctx = {}) {
      requireRole(p, 'admin');
      const row = await db.invite.findFirst({ where: { id: inviteId, orgId: p.orgId, acceptedAt: null } });
      if (!row) throw notFound('That invite');
      await db.invite.delete({ where: { id: row.id } });
      await audit.record({ orgId: p.orgId, actor: actorOf(p), action: 'member.invite_revoked', target: row.email, detail: { invite_id: row.id }, ip: ctx.ip });
    },

    /** What the invite page shows: for whom, which org, which role (the token is the credential). */
    async previewInvite(token: string): Promise<InvitePreview> {
      const invite = await findValidInvite(token);
      const user = await db.user.findUnique({ where: { email: invite.email }, select: { id: true } });
      return { email: invite.email, role: invite.role as Role, org_name: invite.org.name, existing_account: !!user };
    },

    /**
     * Accept an invite: a new account with the name and password given, or — for an email that
     * already has an account — that account joins after its password is checked. Logs in.
     */
    async acceptInvite(token: string, name: string, password: string, ctx: Ctx = {}) {
      const invite = await findValidInvite(token);
      const existing = await db.user.findUnique({ where: { email: invite.email } });
      if (existing && !(await verifyPassword(password, existing.passwordHash))) {
        throw new AppError('UNAUTHORIZED', `An account for ${invite.email} exists already: enter its password to join.`);
      }
      const passwordHash = existing ? null : await hashPassword(password);
      const userId = existing?.id ?? newId('user');
      await db.$transaction(async (tx) => {
        // Marking it accepted first, conditionally, makes two racing accepts produce one member.
        const claimed = await tx.invite.updateMany({ where: { id: invite.id, acceptedAt: null }, data: { acceptedAt: new Date() } });
        if (claimed.count === 0) throw new AppError('NOT_FOUND', 'This invite link is not valid (it was used or revoked).');
        if (!existing) await tx.user.create({ data: { id: userId, email: invite.email, name, passwordHash: passwordHash! } });
        await tx.membership.upsert({
          where: { orgId_userId: { orgId: invite.orgId, userId } },
          create: { orgId: invite.orgId, userId, role: invite.role },
          update: {},
        });
      });
      await audit.record({ orgId: invite.orgId, actor: invite.email, action: 'member.joined', target: invite.email, detail: { role: invite.role, invite_id: invite.id }, ip: ctx.ip });
      return auth.startSession(userId, invite.orgId);
    },

    /**
     * A member made by an admin, with a one-time password shown once. Org B's admin must not learn
     * whether the email already has an account in another org (cross-org enumeration), so both
     * cases make the same thing: a pending "account" invite whose code is the one-time password,
     * listed like any invite, audited alike, answered alike. No account is made or changed here:
     * - a new email: the first login with email + one-time password creates the account (it must
     *   change the password) and its membership (auth.login);
     * - an existing account: its owner redeems the code on the invite page (/invite/CODE) with
     *   their own password; nothing about the account changes until then.
     * `member.user_id` in the answer is the invite's id (the handle to revoke it), either way.
     */
    async create(p: Principal, email: string, name: string, role: Role, ctx: Ctx = {}): Promise<{ member: Member; one_time_password: string }> {
      requireRole(p, 'admin');
      // Membership of *this* org is the admin's own business (the members list shows it anyway).
      const member = await db.membership.findFirst({ where: { orgId: p.orgId, user: { email } }, select: { userId: true } });
      if (member) throw new AppError('CONFLICT', `${email} is already a member of this organisation.`);
      const oneTime = randomBytes(ONE_TIME_PASSWORD_BYTES).toString('base64url');
      const row = await db.invite.create({
        data: {
          id: newId('inv'),
          orgId: p.orgId,
          email,
          role,
          kind: 'account',
          name,
          tokenHash: sha256(oneTime),
          expiresAt: new Date(Date.now() + INVITE_TTL_MS),
          createdBy: p.userId,
        },
      });
      await audit.record({ orgId: p.orgId, actor: actorOf(p), action: 'member.created', target: email, detail: { role, invite_id: row.id }, ip: ctx.ip });
      return { member: { user_id: row.id, email, name, role, must_change_password: true }, one_time_password: oneTime };
    },

    async changeRole(p: Principal, userId: string, role: Role, ctx: Ctx = {}): Promise<Member> {
      requireRole(p, 'admin');
      const { before, member } = await db.$transaction(async (tx) => {
        const m = await tx.membership.findUnique({ where: { orgId_userId: { orgId: p.orgId, userId } }, include: { user: true } });
        if (!m) throw notFound('That member');
        if (m.role === 'admin' && role !== 'admin' && (await tx.membership.count({ where: { orgId: p.orgId, role: 'admin' } })) <= 1) {
          throw new AppError('CONFLICT', LAST_ADMIN);
        }
        await tx.membership.update({ where: { orgId_userId: { orgId: p.orgId, userId } }, data: { role } });
        return { before: m.role, member: m };
      });
      events.emit({ kind: 'role_changed', userId, orgId: p.orgId });
      await audit.record({
        orgId: p.orgId,
        actor: actorOf(p),
        action: 'member.role_changed',
        target: member.user.email,
        detail: { from: before, to: role },
        ip: ctx.ip,
      });
      return { user_id: userId, email: member.user.email, name: member.user.name, role, must_change_password: member.user.mustChangePassword };
    },

    /** Remove a member from the org; with no org left, every login of theirs ends too. */
    async remove(p: Principal, userId: string, ctx: Ctx = {}) {
      requireRole(p, 'admin');
      const m = await db.$transaction(async (tx) => {
        const row = await tx.membership.findUnique({ where: { orgId_userId: { orgId: p.orgId, userId } }, include: { user: true } });
        if (!row) throw notFound('That member');
        if (row.role === 'admin' && (await tx.membership.count({ where: { orgId: p.orgId, role: 'admin' } })) <= 1) {
          throw new AppError('CONFLICT', LAST_ADMIN);
        }
        await tx.membership.delete({ where: { orgId_userId: { orgId: p.orgId, userId } } });
        return row;
      });
      events.emit({ kind: 'removed', userId, orgId: p.orgId });
      if ((await db.membership.count({ where: { userId } })) === 0) await auth.endAllSessions(userId);
      await audit.record({ orgId: p.orgId, actor: actorOf(p), action: 'member.removed', target: m.user.email, detail: { role: m.role }, ip: ctx.ip });
    },

    /** A new org with the caller as its admin; this login switches to it. */
    async createOrg(p: Principal, token: string, name: string, ctx: Ctx = {}) {
      requireRole(p, 'admin');
      const orgId = newId('org');
      await db.$transaction([
        db.org.create({ data: { id: orgId, name } }),
        db.membership.create({ data: { orgId, userId: p.userId, role: 'admin' } }),
      ]);
      await auth.switchOrg(token, p, orgId);
      await audit.record({ orgId, actor: actorOf(p), action: 'org.created', target: name, detail: { from_org: p.orgId }, ip: ctx.ip });
      return { id: orgId, name };
    },
  };
}

export type MemberService = ReturnType<typeof createMemberService>;
