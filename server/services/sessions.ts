import type { CreateSessionCommand, ProviderId, RepoTree, SessionState, SessionSummary } from '../../protocol';
import { TERMINAL_STATES } from '../../protocol';
import type { Db } from '../db';
import { requireRole, type Principal } from './auth';
import { AppError, notFound } from './errors';
import { newId } from './ids';
import type { Broadcaster, RunnerGateway } from './ports';
import { repoRefFromSource } from './repos';

type SessionRow = {
  id: string;
  repoId: string;
  runnerId: string | null;
  provider: string;
  roomPath: string;
  title: string;
  state: string;
  reason: string;
  createdAt: Date;
  lastSeq: number;
  createdBy?: { name: string } | null;
};

export function sessionSummary(s: SessionRow): SessionSummary {
  return {
    id: s.id,
    repo_id: s.repoId,
    runner_id: s.runnerId,
    provider: s.provider as ProviderId,
    room_path: s.roomPath,
    title: s.title,
    state: s.state as SessionState,
    reason: s.reason,
    created_by: s.createdBy?.name ?? '',
    created_at: s.createdAt.toISOString(),
    last_seq: s.lastSeq,
  };
}

const LIVE: { notIn: SessionState[] } = { notIn: [...TERMINAL_STATES] };
/** Ended sessions stay in the world list this long so a failure can still be read. */
const RECENTLY_ENDED_MS = 60_000;

export function createSessionService(db: Db, gateway: () => RunnerGateway, broadcast: () => Broadcaster) {
  async function load(orgId: string, id: string) {
    const s = await db.session.findFirst({ where: { id, orgId }, include: { createdBy: { select: { name: true } } } });
    if (!s) throw notFound('That session');
    return s;
  }

  async function publish(orgId: string, id: string) {
    const s = await load(orgId, id);
    broadcast().sessionUpdated(orgId, sessionSummary(s));
    return sessionSummary(s);
  }

  async function fail(orgId: string, id: string, reason: string) {
    await db.session.update({ where: { id }, data: { state: 'FAILED', reason, endedAt: new Date() } });
    return publish(orgId, id);
  }

  /** The least-loaded online runner of the org that has the provider and free capacity. */
  async function pickRunner(orgId: string, provider: ProviderId) {
    const runners = await db.runner.findMany({ where: { orgId, online: true }, orderBy: { name: 'asc' } });
    const candidates = [];
    for (const r of runners) {
      if (!gateway().isOnline(r.id)) continue;
      if (!(JSON.parse(r.providers) as string[]).includes(provider)) continue;
      const active = await db.session.count({ where: { runnerId: r.id, state: LIVE } });
      if (active < r.capacity) candidates.push({ r, active });
    }
    candidates.sort((a, b) => a.active - b.active);
    return candidates[0]?.r ?? null;
  }

  function requireLive(s: { state: string }) {
    if ((TERMINAL_STATES as string[]).includes(s.state)) throw new AppError('CONFLICT', 'That session has ended.');
  }

  return {
    load,
    publish,

    async list(orgId: string): Promise<SessionSummary[]> {
      const rows = await db.session.findMany({
        where: { orgId, OR: [{ state: LIVE }, { endedAt: { gt: new Date(Date.now() - RECENTLY_ENDED_MS) } }] },
        include: { createdBy: { select: { name: true } } },
        orderBy: { createdAt: 'asc' },
      });
      return rows.map(sessionSummary);
    },

    async get(p: Principal, id: string) {
      return sessionSummary(await load(p.orgId, id));
    },

    async spawn(
      p: Principal,
      body: { repo_id: string; room_path: string; provider: ProviderId; title?: string; cols?: number; rows?: number },
    ): Promise<SessionSummary> {
      requireRole(p, 'operator');
      const repo = await db.repo.findFirst({ where: { id: body.repo_id, orgId: p.orgId } });
      if (!repo) throw notFound('That repository');
      if (repo.status !== 'ready' || !repo.tree) {
        throw new AppError('CONFLICT', `"${repo.name}" is not ready yet (${repo.status}${repo.error ? `: ${repo.error}` : ''}).`);
      }
      const tree = JSON.parse(repo.tree) as RepoTree;
      if (!tree.dirs.some((d) => d.path === body.room_path)) {
        throw new AppError('BAD_REQUEST', `"${body.room_path}" is not a directory of ${repo.name}.`);
      }
      const runner = await pickRunner(p.orgId, body.provider);
      if (!runner) {
        throw new AppError('NO_RUNNER', `No online runner with free capacity offers the ${body.provider} provider. Start a runner or stop a session.`);
      }
      const id = newId('sess');
      const title = body.title || `${body.provider} in /${body.room_path}`;
      await db.session.create({
        data: {
          id,
          orgId: p.orgId,
          repoId: repo.id,
          runnerId: runner.id,
          createdById: p.userId,
          provider: body.provider,
          roomPath: body.room_path,
          title,
          state: 'CREATED',
          reason: `Placed on runner ${runner.name}`,
        },
      });
      await publish(p.orgId, id);
      const command: CreateSessionCommand = {
        session_id: id,
        org_id: p.orgId,
        repo_id: repo.id,
        repo: repoRefFromSource(repo.source),
        repo_source: repo.source,
        checkout: { type: 'branch', ref: repo.defaultBranch ?? tree.default_branch },
        room_path: body.room_path,
        provider: body.provider,
        task: { title },
        policy: {},
        mode: 'write',
        cols: body.cols ?? 120,
        rows: body.rows ?? 32,
      };
      const res = await gateway().command(runner.id, 'session:create', command);
      if (!res.ok) return fail(p.orgId, id, `The runner refused the session: ${res.error.message}`);
      return sessionSummary(await load(p.orgId, id));
    },

    async stop(p: Principal, id: string): Promise<SessionSummary> {
      requireRole(p, 'operator');
      const s = await load(p.orgId, id);
      if ((TERMINAL_STATES as string[]).includes(s.state)) return sessionSummary(s);
      if (!s.runnerId || !gateway().isOnline(s.runnerId)) return fail(p.orgId, id, 'Stopped while its runner was offline.');
      const res = await gateway().command(s.runnerId, 'session:stop', { session_id: id });
      if (!res.ok) throw new AppError('RUNNER_ERROR', `The runner could not stop the session: ${res.error.message}`);
      return sessionSummary(await load(p.orgId, id));
    },

    async input(p: Principal, id: string, data: string) {
      requireRole(p, 'operator');
      const s = await load(p.orgId, id);
      requireLive(s);
      if (!s.runnerId || !gateway().isOnline(s.runnerId)) throw new AppError('RUNNER_ERROR', 'The session’s runner is offline.');
      const res = await gateway().command(s.runnerId, 'session:input', { session_id: id, data, mode: 'raw' });
      if (!res.ok) throw new AppError('RUNNER_ERROR', res.error.message);
    },

    async resize(p: Principal, id: string, cols: number, rows: number) {
      requireRole(p, 'operator');
      const s = await load(p.orgId, id);
      requireLive(s);
      if (!s.runnerId || !gateway().isOnline(s.runnerId)) return;
      await gateway().command(s.runnerId, 'session:resize', { session_id: id, cols, rows });
    },

    /** Forward a viewer's flow-control ack to the runner that owns the session. */
    async terminalAck(runnerId: string | null, sessionId: string, seq: number) {
      if (runnerId && gateway().isOnline(runnerId)) gateway().notify(runnerId, 'terminal:ack', { session_id: sessionId, seq });
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
