import { logRedaction } from '../../common/log-redaction';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Db } from '../db';
import { requireRole, type Principal } from './auth';
import { AppError, notFound } from './errors';
import { newId } from './ids';

const IV_BYTES = 12; // GCM's standard nonce size
const TAG_BYTES = 16;

/**
 * The key that encrypts secrets at rest: AGENT_VILLAGE_SECRET_KEY (32 bytes, base64) when set
 * (put it in your secret manager for Postgres deployments), else a key file created once with
 * mode 0600 beside the database.
 */
export function loadSecretKey(envKey: string | undefined, keyFile: string): Buffer {
  if (envKey) {
    const key = Buffer.from(envKey, 'base64');
    if (key.length !== 32) throw new Error('AGENT_VILLAGE_SECRET_KEY must be 32 bytes, base64-encoded (openssl rand -base64 32).');
    return key;
  }
  if (existsSync(keyFile)) return Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64');
  mkdirSync(dirname(keyFile), { recursive: true });
  const key = randomBytes(32);
  writeFileSync(keyFile, key.toString('base64'), { mode: 0o600 });
  return key;
}

export function encrypt(key: Buffer, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

export function decrypt(key: Buffer, stored: string): string {
  const raw = Buffer.from(stored, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}

/** Secret names become environment variable names in sessions. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** Names a secret may not take: the session's own environment depends on them. */
const RESERVED = new Set(['PATH', 'HOME', 'TERM', 'SHELL', 'USER', 'LOGNAME', 'LANG']);

export function createSecretService(
  db: Db,
  key: Buffer,
  record: (r: { orgId: string; actor: string; action: string; target?: string; detail?: Record<string, unknown> }) => Promise<void>,
) {
  return {
    /** Names and dates only: a value is never shown back after saving. */
    async list(p: Principal) {
      requireRole(p, 'admin');
      const rows = await db.secret.findMany({ where: { orgId: p.orgId }, orderBy: { name: 'asc' } });
      return rows.map((r) => ({ name: r.name, updated_at: r.updatedAt.toISOString(), inject_into_sessions: r.injectIntoSessions }));
    },

    async set(p: Principal, name: string, value: string) {
      requireRole(p, 'admin');
      if (!NAME.test(name) || RESERVED.has(name) || name.startsWith('AGENT_VILLAGE_')) {
        throw new AppError('BAD_REQUEST', `"${name}" cannot be a secret name: use letters, digits and _ (not starting with a digit), and not ${[...RESERVED].join(', ')} or AGENT_VILLAGE_*.`);
      }
      const ciphertext = encrypt(key, value);
      await db.secret.upsert({
        where: { orgId_name: { orgId: p.orgId, name } },
        create: { id: newId('secret'), orgId: p.orgId, name, ciphertext },
        update: { ciphertext },
      });
      await record({ orgId: p.orgId, actor: p.email, action: 'secret.saved', target: name });
    },

    /** Knowingly put a secret into every new session's environment (or take it out again); audited. */
    async setInjection(p: Principal, name: string, inject: boolean) {
      requireRole(p, 'admin');
      const res = await db.secret.updateMany({ where: { orgId: p.orgId, name }, data: { injectIntoSessions: inject } });
      if (res.count === 0) throw notFound('That secret');
      await record({ orgId: p.orgId, actor: p.email, action: inject ? 'secret.injection_on' : 'secret.injection_off', target: name });
    },

    /** Names an admin marked "inject into sessions" (CreateSessionCommand.inject_secrets). */
    async injectedNames(orgId: string): Promise<string[]> {
      const rows = await db.secret.findMany({ where: { orgId, injectIntoSessions: true }, select: { name: true }, orderBy: { name: 'asc' } });
      return rows.map((r) => r.name);
    },

    async remove(p: Principal, name: string) {
      requireRole(p, 'admin');
      const res = await db.secret.deleteMany({ where: { orgId: p.orgId, name } });
      if (res.count === 0) throw notFound('That secret');
      await record({ orgId: p.orgId, actor: p.email, action: 'secret.deleted', target: name });
    },

    /** Decrypted values for one org's new session (and for the runner's redaction). */
    async forSession(orgId: string): Promise<Record<string, string>> {
      const rows = await db.secret.findMany({ where: { orgId } });
      const values = Object.fromEntries(rows.map((r) => [r.name, decrypt(key, r.ciphertext)]));
      logRedaction.remember(Object.values(values));
      return values;
    },
  };
}

export type SecretService = ReturnType<typeof createSecretService>;
