import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { Me, Role } from '../../protocol';
import { ROLE_RANK } from '../../protocol';
import type { Db } from '../db';
import { AppError, forbidden } from './errors';
import { newId } from './ids';

const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;

/** scrypt cost: N=2^15 takes ~50 ms here, slow for guessing and fine for a login. */
const SCRYPT = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const KEY_LEN = 32;
/** Login sessions last 30 days; a logout or password change ends them sooner. */
const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;
export const SESSION_COOKIE = 'av_session';

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEY_LEN, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
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
}

export function requireRole(principal: Principal, role: Role): void {
  if (ROLE_RANK[principal.role] < ROLE_RANK[role]) throw forbidden(`This needs the ${role} role; you are ${principal.role}.`);
}

export function createAuthService(db: Db) {
  async function isSetupNeeded(): Promise<boolean> {
    return (await db.user.count()) === 0;
  }

  async function startSession(userId: string): Promise<{ token: string; expiresAt: Date }> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
    await db.authSession.create({ data: { id: newId('auth'), tokenHash: sha256(token), userId, expiresAt } });
    return { token, expiresAt };
  }

  return {
    isSetupNeeded,

    /** First run: the first account becomes admin of the installation's org. */
    async setup(input: { email: string; password: string; name?: string; org_name?: string }, orgId: string) {
      const passwordHash = await hashPassword(input.password);
      const userId = newId('user');
      // The count check and the insert run in one transaction so two racing setups make one admin.
      await db.$transaction(async (tx) => {
        if ((await tx.user.count()) > 0) throw new AppError('CONFLICT', 'Setup is already done: log in instead.');
        await tx.user.create({ data: { id: userId, email: input.email, passwordHash, name: input.name ?? input.email.split('@')[0]! } });
        await tx.membership.create({ data: { orgId, userId, role: 'admin' } });
        if (input.org_name) await tx.org.update({ where: { id: orgId }, data: { name: input.org_name } });
      });
      return startSession(userId);
    },

    async login(email: string, password: string) {
      const user = await db.user.findUnique({ where: { email } });
      // Verify against a dummy hash when the user is unknown so timing does not reveal accounts.
      const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_HASH);
      if (!user || !ok) throw new AppError('UNAUTHORIZED', 'Wrong email or password.');
      return startSession(user.id);
    },

    async logout(token: string) {
      await db.authSession.deleteMany({ where: { tokenHash: sha256(token) } });
    },

    /** The principal behind a login cookie, or null. Identity comes only from here. */
    async principalFromToken(token: string | undefined | null): Promise<Principal | null> {
      if (!token) return null;
      const s = await db.authSession.findUnique({
        where: { tokenHash: sha256(token) },
        include: { user: { include: { memberships: { include: { org: true } } } } },
      });
      if (!s || s.expiresAt.getTime() < Date.now()) return null;
      const m = s.user.memberships[0];
      if (!m) return null;
      return { userId: s.user.id, email: s.user.email, name: s.user.name, orgId: m.orgId, orgName: m.org.name, role: m.role as Role };
    },

    toMe(p: Principal): Me {
      return { user: { id: p.userId, email: p.email, name: p.name }, org: { id: p.orgId, name: p.orgName }, role: p.role };
    },
  };
}

const DUMMY_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

export type AuthService = ReturnType<typeof createAuthService>;
