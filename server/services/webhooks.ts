import { randomBytes } from 'node:crypto';
import { GitPushEventSchema, type Result, type WebhookInfo } from '../../protocol';
import type { Db } from '../db';
import type { AuditService } from './audit';
import { requireRole, type Principal } from './auth';
import { notFound } from './errors';
import type { PatrolService } from './patrols';
import type { RepoService } from './repos';
import { decrypt, encrypt } from './secrets';
import { canonicalSource } from '../../common/git-url';
import { verifySignature } from './webhook-signature';

export const WEBHOOK_PATH = '/api/webhooks/git';

export interface WebhookDelivery {
  /** X-GitHub-Event */
  event: string | null;
  /** X-GitHub-Delivery */
  delivery: string | null;
  /** X-Hub-Signature-256 */
  signature: string | null;
  /** The raw body: the signature is over these exact bytes. */
  body: Buffer;
}

export interface WebhookAnswer {
  status: number;
  body: Result<unknown>;
}

const answer = (status: number, body: Result<unknown>): WebhookAnswer => ({ status, body });
const refused = (message: string) => answer(401, { ok: false, error: { code: 'UNAUTHORIZED', message } });

/**
 * `POST /api/webhooks/git`: GitHub's push event, signed with the repository's webhook secret
 * (one per repository, made when its patrols are set up, shown to admins, rotatable). A push to
 * the default branch of a registered repository fetches it (a rescan) and runs its enabled
 * patrols. Nothing runs unless the signature matches a registered repository's secret.
 */
export function createWebhookService(db: Db, key: Buffer, deps: { patrols: () => PatrolService; repos: RepoService; audit: AuditService }) {
  async function loadRepo(p: Principal, repoId: string) {
    const repo = await db.repo.findFirst({ where: { id: repoId, orgId: p.orgId }, select: { id: true } });
    if (!repo) throw notFound('That repository');
  }

  const service = {
    async ensure(orgId: string, repoId: string): Promise<void> {
      if (await db.repoWebhook.count({ where: { repoId } })) return;
      await db.repoWebhook.create({ data: { repoId, orgId, secret: encrypt(key, randomBytes(24).toString('base64url')) } }).catch(() => undefined);
    },

    async info(p: Principal, repoId: string): Promise<WebhookInfo> {
      requireRole(p, 'admin');
      await loadRepo(p, repoId);
      await service.ensure(p.orgId, repoId);
      const row = (await db.repoWebhook.findUnique({ where: { repoId } }))!;
      return { path: WEBHOOK_PATH, secret: decrypt(key, row.secret), last_delivery_at: row.lastDeliveryAt?.toISOString() ?? null };
    },

    async rotate(p: Principal, repoId: string, ip?: string | null): Promise<WebhookInfo> {
      requireRole(p, 'admin');
      await loadRepo(p, repoId);
      const secret = encrypt(key, randomBytes(24).toString('base64url'));
      await db.repoWebhook.upsert({ where: { repoId }, create: { repoId, orgId: p.orgId, secret }, update: { secret } });
      await deps.audit.record({ orgId: p.orgId, actor: p.email, action: 'webhook.secret_rotated', target: repoId, ip });
      return service.info(p, repoId);
    },

    async handle(d: WebhookDelivery): Promise<WebhookAnswer> {
      if (!d.signature) return refused('Missing X-Hub-Signature-256: set the webhook secret shown on the patrols page.');
      let raw: unknown;
      try {
        raw = JSON.parse(d.body.toString('utf8'));
      } catch {
        return answer(400, { ok: false, error: { code: 'BAD_REQUEST', message: 'The body must be JSON (content type application/json).' } });
      }
      const repository = (raw as { repository?: unknown } | null)?.repository;
      if (!repository || typeof repository !== 'object') {
        return answer(400, { ok: false, error: { code: 'BAD_REQUEST', message: 'The payload names no repository.' } });
      }
      const r = repository as Record<string, unknown>;
      const names = new Set<string>();
      for (const k of ['clone_url', 'ssh_url', 'git_url', 'html_url', 'url']) if (typeof r[k] === 'string' && r[k]) names.add(canonicalSource(r[k]));
      if (typeof r.full_name === 'string' && r.full_name) names.add(`github.com/${r.full_name.toLowerCase()}`);
      const candidates = (await db.repo.findMany({ where: { webhook: { isNot: null } }, include: { webhook: true } })).filter((repo) => names.has(canonicalSource(repo.source)));
      // Same answer for an unknown repository and a wrong secret: callers learn nothing about what is registered.
      const verified = candidates.filter((repo) => verifySignature(decrypt(key, repo.webhook!.secret), d.body, d.signature));
      if (!verified.length) return refused('The signature does not match (wrong secret, or the repository is not registered here).');
      await db.repoWebhook.updateMany({ where: { repoId: { in: verified.map((v) => v.id) } }, data: { lastDeliveryAt: new Date() } });

      if (d.event === 'ping') return answer(200, { ok: true, data: { pong: true, repos: verified.map((v) => v.name) } });
      if (d.event !== 'push') return answer(202, { ok: true, data: { ignored: `event "${d.event ?? 'unknown'}" (only push runs patrols)` } });
      const push = GitPushEventSchema.safeParse(raw);
      if (!push.success) return answer(400, { ok: false, error: { code: 'BAD_REQUEST', message: 'Not a push event payload (ref and repository are needed).' } });
      const delivery = d.delivery && /^[\w-]{1,100}$/.test(d.delivery) ? d.delivery : randomBytes(12).toString('hex');
      const out = [];
      for (const repo of verified) {
        const branch = repo.defaultBranch ?? push.data.repository.default_branch ?? 'main';
        if (push.data.deleted || push.data.ref !== `refs/heads/${branch}`) {
          out.push({ repo_id: repo.id, name: repo.name, ignored: `${push.data.ref} is not the default branch (${branch})`, runs: [] });
          continue;
        }
        // The building follows the push (new rooms); every patrol fetches before its worktree anyway.
        void deps.repos.scan(repo.orgId, repo.id).catch((err) => console.error('[server] rescan after push failed', err));
        const runs = await deps.patrols().onPush(repo.id, delivery);
        out.push({ repo_id: repo.id, name: repo.name, runs: runs.map((run) => ({ id: run.id, kind: run.kind, status: run.status })) });
      }
      return answer(202, { ok: true, data: { delivery, repos: out } });
    },
  };
  return service;
}

export type WebhookService = ReturnType<typeof createWebhookService>;
