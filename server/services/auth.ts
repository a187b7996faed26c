import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import type { Me, MeDetails, Role } from '../../protocol';
import { ROLE_RANK } from '../../protocol';
import type { Db } from '../db';
import { actorOf, type AuditService } from './audit';
import { AppError, forbidden } from './errors';
import { newId } from './ids';
import { ACCOUNT_WINDOW_S, createLoginThrottle, type LoginThrottle } from './login-throttle';
import type { MemberEvents } from './member-events';

const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;

/** Hashes written before argon2id: still verified, and replaced by argon2id at the next login. */
const SCRYPT = { maxmem: 64 * 1024 * 1024 } as const;
/** argon2id with OWASP's first recommended setting (19 MiB, 2 passes, 1 lane): ~30 ms here. */
const ARGON2 = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;
/** Login sessions last 30 days; a logout or password change ends them sooner. */
const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;
export const SESSION_COOKIE = 'av_session';

/** argon2id (PHC string `$argon2id$v=19$m=…`), the algorithm for every new or changed password. */
export async function hashPassword(password: string): Promise<string> {
  return argon2Hash(password, ARGON2);
}

/** A stored hash that is not argon2id with today's cost is replaced after a successful login. */
export function needsRehash(stored: string): boolean {
  return !stored.startsWith(`$argon2id$v=19$m=${ARGON2.memoryCost},t=${ARGON2.timeCost},p=${ARGON2.parallelism}$`);
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (stored.startsWith('$argon2')) {
    try {
      return await argon2Verify(stored, password);
    } catch {
      return false;
    }
  }
  const [kind, n, r, p, saltB64, keyB64] = stored.split('$');
  if (kind !== 'scrypt' || !saltB64 || !keyB64) return false;
  const expected = Buffer.from(keyB64, 'base64');
  const key = await scrypt(password, Buffer.from(saltB64, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return timingSafeEqual(key, expected);
}

export const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export interface Principal {
  userId: string;
  email: string;
  name: string;
  orgId: string;
  orgName: string;
  role: Role;
  /** An account made with a one-time password may only change it until it does. */
  mustChangePassword: boolean;
}

export function requireRole(principal: Principal, role: Role): void {
  if (ROLE_RANK[principal.role] < ROLE_RANK[role]) throw forbidden(`This needs the ${role} role; you are ${principal.role}.`);
}

/** What a setup without the printed link's token is told. */
export const SETUP_TOKEN_REFUSED =
  'This setup link is missing its token or the token is wrong: open the link the server printed in its log ("first run: open …/setup?token=…").';

/** Failed logins of one account from one address within this window share one audit row (with a count). */
const FAILED_LOGIN_BURST_MS = ACCOUNT_WINDOW_S * 1000;

export function createAuthService(db: Db, audit: AuditService, events: MemberEvents, throttle: LoginThrottle = createLoginThrottle()) {
  async function isSetupNeeded(): Promise<boolean> {
    return (await db.user.count()) === 0;
  }

  /** sha256 of the one-time setup token while setup is open; only whoever can read the server's log has it. */
  let setupTokenHash: Buffer | null = null;
  let onSetupDone: (() => void) | null = null;
  const setupTokenMatches = (given: string | undefined) =>
    !!setupTokenHash && !!given && timingSafeEqual(createHash('sha256').update(given).digest(), setupTokenHash);

  /** A fresh random token per login (never reused from before the login: no session fixation). */
  /**
   * First login of a member an admin added with a one-time password (members.create): with no
   * account for the email yet, a pending "account" invite whose code is this password makes the
   * account (it must change the password) and its membership. True when it did.
   */
  async function claimAccountInvite(email: string, password: string, ip?: string | null): Promise<boolean> {
    const invite = await db.invite.findFirst({
      where: { email, kind: 'account', tokenHash: sha256(password), acceptedAt: null, expiresAt: { gt: new Date() } },
    });
    if (!invite) return false;
    const passwordHash = await hashPassword(password);
    const userId = newId('user');
    const lost = new Error('account invite already claimed');
    const made = await db
      .$transaction(async (tx) => {
        // Claimed first, conditionally: two racing logins make one account. Losing rolls back.
        const claimed = await tx.invite.updateMany({ where: { id: invite.id, acceptedAt: null }, data: { acceptedAt: new Date() } });
        if (claimed.count === 0 || (await tx.user.findUnique({ where: { email }, select: { id: true } }))) throw lost;
        await tx.user.create({ data: { id: userId, email, name: invite.name ?? email.split('@')[0], passwordHash, mustChangePassword: true } });
        await tx.membership.create({ data: { orgId: invite.orgId, userId, role: invite.role } });
        return true;
      })
      .catch((err: unknown) => {
        if (err === lost) return false;
        throw err;
      });
    if (made) await audit.record({ orgId: invite.orgId, actor: email, action: 'member.joined', target: email, detail: { role: invite.role, invite_id: invite.id }, ip });
    return made;
  }

  async function startSession(userId: string, activeOrgId: string | null = null): Promise<{ token: string; expiresAt: Date }> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
    await db.authSession.create({ data: { id: newId('auth'), tokenHash: sha256(token), userId, expiresAt, activeOrgId } });
    return { token, expiresAt };
  }

  /** Every login of the user ends (password changed, account removed from its last org). */
  async function endAllSessions(userId: string) {
    await db.authSession.deleteMany({ where: { userId } });
    events.emit({ kind: 'sessions_ended', userId });
  }

  return {
    isSetupNeeded,

    /**
     * At start, while no account exists: a fresh one-time token that POST /api/setup must carry
     * (the server prints it as the first-run link). Null when setup is done. `done` runs once the
     * first admin exists (the server removes its copy of the link).
     */
    async issueSetupToken(done?: () => void): Promise<string | null> {
      if (!(await isSetupNeeded())) return null;
      const token = randomBytes(32).toString('base64url');
      setupTokenHash = createHash('sha256').update(token).digest();
      onSetupDone = done ?? null;
      return token;
    },

    /** First run: the first account becomes admin of the installation's org (with the setup link's token). */
    async setup(input: { email: string; password: string; name?: string; org_name?: string; setup_token?: string }, orgId: string) {
      if (!(await isSetupNeeded())) throw new AppError('CONFLICT', 'Setup is already done: log in instead.');
      if (!setupTokenMatches(input.setup_token)) throw new AppError('FORBIDDEN', SETUP_TOKEN_REFUSED);
      const passwordHash = await hashPassword(input.password);
      const userId = newId('user');
      // The count check and the insert run in one transaction so two racing setups make one admin.
      await db.$transaction(async (tx) => {
        if ((await tx.user.count()) > 0) throw new AppError('CONFLICT', 'Setup is already done: log in instead.');
        // The setup account is the installation admin: it edits the plans' limits and prices.
        await tx.user.create({ data: { id: userId, email: input.email, passwordHash, name: input.name ?? input.email.split('@')[0]!, isInstallAdmin: true } });
        await tx.membership.create({ data: { orgId, userId, role: 'admin' } });
        if (input.org_name) await tx.org.update({ where: { id: orgId }, data: { name: input.org_name } });
      });
      // One-time: the link is spent with the first admin.
      setupTokenHash = null;
      onSetupDone?.();
      onSetupDone = null;
      return startSession(userId);
    },

    startSession,
    endAllSessions,

    /**
     * Check email and password and start a new login session. The token the browser had before
     * (if any) is ended: the session token rotates at every login. Both outcomes are audited.
     */
    async login(email: string, password: string, ctx: { ip?: string | null; previousToken?: string | null } = {}) {
      let user = await db.user.findUnique({ where: { email }, include: { memberships: { select: { orgId: true } } } });
      let orgIds = user?.memberships.map((m) => m.orgId) ?? [];
      // Failures are audited once per burst (a count on one row), not once per attempt.
      const recordFailure = async (reason: string, throttled: boolean) => {
        // An unknown email belongs to no org: the installation's first org keeps the record.
        const where = orgIds.length ? orgIds : [(await db.org.findFirst({ orderBy: { createdAt: 'asc' }, select: { id: true } }))?.id].filter(Boolean);
        for (const orgId of where as string[]) {
          await audit.recordBurst(
            { orgId, actor: email, action: 'auth.login_failed', target: email, detail: { reason }, add: { throttled: throttled ? 1 : 0 }, ip: ctx.ip },
            FAILED_LOGIN_BURST_MS,
          );
        }
      };
      try {
        await throttle.attempt(email, ctx.ip);
      } catch (err) {
        // Refused before the password is even checked: a throttled guess costs no hashing.
        await recordFailure('throttled', true);
        throw err;
      }
      if (!user && (await claimAccountInvite(email, password, ctx.ip))) {
        user = await db.user.findUnique({ where: { email }, include: { memberships: { select: { orgId: true } } } });
        orgIds = user?.memberships.map((m) => m.orgId) ?? [];
      }
      // Verify against a dummy hash when the user is unknown so timing does not reveal accounts.
      const ok = await verifyPassword(password, user?.passwordHash ?? (await dummyHash()));
      if (!user || !ok) {
        await recordFailure(user ? 'wrong password' : 'unknown email', false);
        throw new AppError('UNAUTHORIZED', 'Wrong email or password.');
      }
      await throttle.succeeded(email, ctx.ip);
      if (needsRehash(user.passwordHash)) {
        await db.user.update({ where: { id: user.id }, data: { passwordHash: await hashPassword(password) } });
      }
      if (ctx.previousToken) await db.authSession.deleteMany({ where: { tokenHash: sha256(ctx.previousToken) } });
      for (const orgId of orgIds) await audit.record({ orgId, actor: user.email, action: 'auth.login', target: user.email, ip: ctx.ip });
      return { ...(await startSession(user.id)), mustChangePassword: user.mustChangePassword };
    },

    /** A new password for the signed-in user: every other login of theirs ends, this one gets a new token. */
    async changePassword(p: Principal, current: string, next: string, ip?: string | null) {
      const user = await db.user.findUnique({ where: { id: p.userId } });
      if (!user || !(await verifyPassword(current, user.passwordHash))) throw new AppError('UNAUTHORIZED', 'The current password is wrong.');
      if (current === next) throw new AppError('BAD_REQUEST', 'Choose a new password that differs from the current one.');
      await db.user.update({ where: { id: user.id }, data: { passwordHash: await hashPassword(next), mustChangePassword: false } });
      await endAllSessions(user.id);
      await audit.record({ orgId: p.orgId, actor: actorOf(p), action: 'auth.password_changed', target: user.email, ip });
      return startSession(user.id, p.orgId);
    },

    /** Make another org (one the user belongs to) the one this login acts in. */
    async switchOrg(token: string, p: Principal, orgId: string) {
      const m = await db.membership.findUnique({ where: { orgId_userId: { orgId, userId: p.userId } } });
      if (!m) throw new AppError('NOT_FOUND', 'That organisation was not found.');
      await db.authSession.update({ where: { tokenHash: sha256(token) }, data: { activeOrgId: orgId } });
      events.emit({ kind: 'org_switched', userId: p.userId });
    },

    async logout(token: string) {
      const ended = await db.authSession.findUnique({ where: { tokenHash: sha256(token) }, select: { userId: true } });
      await db.authSession.deleteMany({ where: { tokenHash: sha256(token) } });
      // Open sockets of this login re-read it (and are dropped); remembered rights to type go.
      if (ended) events.emit({ kind: 'logged_out', userId: ended.userId });
    },

    /** The principal behind a login cookie, or null. Identity comes only from here. */
    async principalFromToken(token: string | undefined | null): Promise<Principal | null> {
      if (!token) return null;
      const s = await db.authSession.findUnique({
        where: { tokenHash: sha256(token) },
        include: { user: { include: { memberships: { include: { org: true }, orderBy: { org: { createdAt: 'asc' } } } } } },
      });
      if (!s || s.expiresAt.getTime() < Date.now()) return null;
      // The active org if the user still belongs to it, else their first membership.
      const m = s.user.memberships.find((x) => x.orgId === s.activeOrgId) ?? s.user.memberships[0];
      if (!m) return null;
      return {
        userId: s.user.id,
        email: s.user.email,
        name: s.user.name,
        orgId: m.orgId,
        orgName: m.org.name,
        role: m.role as Role,
        mustChangePassword: s.user.mustChangePassword,
      };
    },

    toMe(p: Principal): Me {
      return { user: { id: p.userId, email: p.email, name: p.name }, org: { id: p.orgId, name: p.orgName }, role: p.role };
    },

    async meDetails(p: Principal): Promise<MeDetails> {
      const ms = await db.membership.findMany({ where: { userId: p.userId }, include: { org: true }, orderBy: { org: { createdAt: 'asc' } } });
      return {
        user: { id: p.userId, email: p.email, name: p.name },
        org: { id: p.orgId, name: p.orgName },
        role: p.role,
        must_change_password: p.mustChangePassword,
        orgs: ms.map((m) => ({ id: m.orgId, name: m.org.name, role: m.role as Role })),
      };
    },
  };
}

/** An argon2id hash of a random string: an unknown email costs the same verify as a known one. */
let dummy: Promise<string> | null = null;
const dummyHash = () => (dummy ??= hashPassword(randomBytes(16).toString('hex')));

export type AuthService = ReturnType<typeof createAuthService>;
