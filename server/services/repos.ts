import { basename } from 'node:path';
import { parseSource } from '../../common/git-url';
import { repoAccessAllows } from '../../common/repo-access';
import type { RepoRef, RepoSummary, RepoTree } from '../../protocol';
import { RepoTreeSchema } from '../../protocol';
import type { Db } from '../db';
import { AppError, notFound } from './errors';
import { checkRepoSource } from './source-policy';
import { withoutServerDetail } from './viewer-text';
import { newId } from './ids';
import type { Broadcaster, RunnerGateway } from './ports';

type RepoRow = {
  id: string;
  name: string;
  source: string;
  status: string;
  error: string | null;
  defaultBranch: string | null;
  headSha: string | null;
  tree: string | null;
};

export function repoSummary(r: RepoRow): RepoSummary {
  return {
    id: r.id,
    name: r.name,
    source: r.source,
    status: r.status as RepoSummary['status'],
    // What git or the runner said, without URLs, hosts or server paths (the log has it all).
    error: r.error === null ? null : withoutServerDetail(r.error),
    default_branch: r.defaultBranch,
    head_sha: r.headSha,
    tree: r.tree ? (JSON.parse(r.tree) as RepoTree) : null,
  };
}

/** github.com/owner/name → { github, owner, name }; a local path → { local, '', dirname }. */
export function repoRefFromSource(source: string): RepoRef {
  const p = parseSource(source);
  if (p?.kind === 'remote') {
    const provider = p.host.includes('github') ? 'github' : p.host.includes('gitlab') ? 'gitlab' : 'git';
    return { provider, owner: p.owner, name: p.name };
  }
  return { provider: 'local', owner: '', name: (p && basename(p.path)) || 'repo' };
}

/** Whether a runner's repo_access patterns let it reach a source: the runner's own rule (common/repo-access.ts). */
export function canReach(patterns: string[], source: string): boolean {
  return repoAccessAllows(patterns, source);
}

export function createRepoService(db: Db, gateway: () => RunnerGateway, broadcast: () => Broadcaster, opts: { allowPrivateGitHosts?: boolean } = {}) {
  async function pickScanner(orgId: string, source: string): Promise<string | null> {
    const runners = await db.runner.findMany({ where: { orgId, online: true }, orderBy: { name: 'asc' } });
    return runners.find((r) => gateway().isOnline(r.id) && canReach(JSON.parse(r.repoAccess) as string[], source))?.id ?? null;
  }

  async function save(orgId: string, id: string, data: Partial<RepoRow>) {
    const row = await db.repo.update({ where: { id }, data });
    broadcast().repoUpdated(orgId, repoSummary(row));
    return row;
  }

  const service = {
    async list(orgId: string): Promise<RepoSummary[]> {
      const rows = await db.repo.findMany({ where: { orgId }, orderBy: [{ name: 'asc' }, { id: 'asc' }] });
      return rows.map(repoSummary);
    },

    async get(orgId: string, id: string) {
      const row = await db.repo.findFirst({ where: { id, orgId } });
      if (!row) throw notFound('That repository');
      return row;
    },

    async add(orgId: string, source: string, name?: string): Promise<RepoSummary> {
      await checkRepoSource(source, { allowPrivateHosts: opts.allowPrivateGitHosts ?? false });
      const exists = await db.repo.findUnique({ where: { orgId_source: { orgId, source } } });
      if (exists) throw new AppError('CONFLICT', `That repository is already in the village as "${exists.name}".`);
      const row = await db.repo.create({
        data: { id: newId('repo'), orgId, source, name: name ?? repoRefFromSource(source).name, status: 'pending' },
      });
      broadcast().repoUpdated(orgId, repoSummary(row));
      void service.scan(orgId, row.id).catch((err) => console.error('[server] repo scan failed', err));
      return repoSummary(row);
    },

    /** Ask a runner to clone/fetch the repository and report its tree (the village is drawn from it). */
    async scan(orgId: string, repoId: string): Promise<void> {
      const repo = await service.get(orgId, repoId);
      const runnerId = await pickScanner(orgId, repo.source);
      if (!runnerId) return; // stays pending; scanned when a runner registers
      const res = await gateway().command(runnerId, 'repo:scan', { repo_id: repo.id, source: repo.source });
      if (!res.ok) {
        console.error(`[server] scan of ${repo.id} failed: ${res.error.message}`);
        await save(orgId, repo.id, { status: 'error', error: res.error.message });
        return;
      }
      const tree = RepoTreeSchema.safeParse(res.data);
      if (!tree.success) {
        await save(orgId, repo.id, { status: 'error', error: 'The runner sent a malformed repository tree.' });
        return;
      }
      await save(orgId, repo.id, {
        status: 'ready',
        error: null,
        tree: JSON.stringify(tree.data),
        defaultBranch: tree.data.default_branch,
        headSha: tree.data.head_sha,
      });
    },

    async scanPending(orgId: string): Promise<void> {
      const pending = await db.repo.findMany({ where: { orgId, status: { in: ['pending', 'error'] } } });
      for (const r of pending) await service.scan(orgId, r.id);
    },

    /** An online runner (on this node) that can reach the source, or null. */
    pickRunnerFor: (orgId: string, source: string) => pickScanner(orgId, source),

    async ensureRegistered(orgId: string, source: string, name: string) {
      const exists = await db.repo.findUnique({ where: { orgId_source: { orgId, source } } });
      if (exists) return repoSummary(exists);
      const row = await db.repo.create({ data: { id: newId('repo'), orgId, source, name, status: 'pending' } });
      return repoSummary(row);
    },
  };
  return service;
}

export type RepoService = ReturnType<typeof createRepoService>;
