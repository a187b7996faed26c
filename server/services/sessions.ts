import type { CreateSessionCommand, PatrolSpec, ProviderId, RepoTree, SessionState, SessionSummary } from '../../protocol';
import { TERMINAL_STATES } from '../../protocol';
import type { Db } from '../db';
import { requireRole, type Principal } from './auth';
import { AppError, notFound } from './errors';
import { newId } from './ids';
import type { Broadcaster, RunnerGateway } from './ports';
import type { PolicyService } from './policy';
import { canReach, repoRefFromSource } from './repos';
import { withoutServerDetail } from './viewer-text';
import type { SecretService } from './secrets';
import type { LimitService } from './limits';
import type { SessionStateService } from './session-state';

type SessionRow = {
  id: string;
  repoId: string;
  runnerId: string | null;
  provider: string;
  kind: string;
  roomPath: string;
  currentRoom: string | null;
  mode: string;
  activity: string | null;
  activityDetail: string;
  activitySince: bigint | null;
  diff: string | null;
  tests: string | null;
  title: string;
  state: string;
  reason: string;
  createdAt: Date;
  lastSeq: number;
  createdBy?: { name: string } | null;
  runner?: { online: boolean } | null;
};

const WITH_SUMMARY = { createdBy: { select: { name: true } }, runner: { select: { online: true } } } as const;

export function sessionSummary(s: SessionRow): SessionSummary {
  const live = !(TERMINAL_STATES as string[]).includes(s.state);
  return {
    id: s.id,
    repo_id: s.repoId,
    runner_id: s.runnerId,
    provider: s.provider as ProviderId,
    kind: s.kind === 'patrol' ? 'patrol' : 'agent',
    room_path: s.currentRoom ?? s.roomPath,
    title: s.title,
    state: s.state as SessionState,
    reason: s.reason,
    created_by: s.createdBy?.name ?? '',
    created_at: s.createdAt.toISOString(),
    last_seq: s.lastSeq,
    mode: s.mode === 'read_only' ? 'read_only' : 'write',
    activity: live ? (s.activity as SessionSummary['activity']) : null,
    activity_detail: s.activityDetail,
    activity_since: s.activitySince === null ? null : Number(s.activitySince),
    diff: s.diff ? (JSON.parse(s.diff) as SessionSummary['diff']) : null,
    tests: s.tests ? (JSON.parse(s.tests) as SessionSummary['tests']) : null,
    runner_lost: live && !!s.runner && !s.runner.online,
  };
}

const LIVE: { notIn: SessionState[] } = { notIn: [...TERMINAL_STATES] };
/** How long a pause or resume waits for the runner's state change to be stored before it answers with what is stored. */
const CONTROL_SETTLE_MS = 5_000;
/** Ended sessions stay in the world list this long so a failure can still be read. */
const RECENTLY_ENDED_MS = 60_000;

export function createSessionService(
  db: Db,
  gateway: () => RunnerGateway,
  broadcast: () => Broadcaster,
  deps: { policy: PolicyService; secrets: SecretService; limits: LimitService; states: SessionStateService },
) {
  async function load(orgId: string, id: string) {
    const s = await db.session.findFirst({ where: { id, orgId }, include: WITH_SUMMARY });
    if (!s) throw notFound('That session');
    return s;
  }

  /**
   * The session once its stored state is no longer `from`, read again with a short
   * backoff for at most CONTROL_SETTLE_MS. A runner answers pause/resume as soon as it has sent the
   * signal; the state change it recorded travels with its events and is stored a moment later (on
   * whichever node holds its socket), so an answer read at once could still say the old state.
   */
  async function stateMovedFrom(orgId: string, id: string, from: string) {
    const until = Date.now() + CONTROL_SETTLE_MS;
    for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
      const s = await load(orgId, id);
      // `from` is a live state, so an ended session has moved from it too.
      if (s.state !== from || Date.now() >= until) return s;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  async function publish(orgId: string, id: string) {
    const s = await load(orgId, id);
    broadcast().sessionUpdated(orgId, sessionSummary(s));
    return sessionSummary(s);
  }

  /**
   * publish() for many sessions with one read (an ingest batch changes the rows of up to every
   * session it carries; one read each was half of a batch's cost, issue 18). Ids of another org are skipped.
   */
  async function publishMany(orgId: string, ids: string[]) {
    const rows = await db.session.findMany({ where: { id: { in: ids }, orgId }, include: WITH_SUMMARY });
    for (const s of rows) broadcast().sessionUpdated(orgId, sessionSummary(s));
  }

  /** FAILED through the lifecycle check: a session that already ended keeps its end. */
  async function fail(orgId: string, id: string, reason: string) {
    await deps.states.transition(orgId, [id], 'FAILED', reason);
    return publish(orgId, id);
  }

  /**
   * The least-loaded eligible runner: online, offering the provider, able to reach the repository,
   * with free capacity. When none is eligible the error says which condition failed.
   */
  async function pickRunner(orgId: string, provider: ProviderId, repoSource: string) {
    const runners = (await db.runner.findMany({ where: { orgId, online: true }, orderBy: { name: 'asc' } })).filter((r) =>
      gateway().isOnline(r.id),
    );
    if (!runners.length) throw new AppError('NO_RUNNER', 'No runner is online. Start one (see Settings → Runner tokens).');
    const withProvider = runners.filter((r) => (JSON.parse(r.providers) as string[]).includes(provider));
    if (!withProvider.length) {
      throw new AppError('NO_RUNNER', `The ${provider} provider is not available on any online runner (it is not installed where the runners run).`);
    }
    const reaching = withProvider.filter((r) => canReach(JSON.parse(r.repoAccess) as string[], repoSource));
    if (!reaching.length) throw new AppError('NO_RUNNER', `No online runner with ${provider} can reach this repository (runner repo access rules).`);
    const candidates = [];
    for (const r of reaching) {
      const active = await db.session.count({ where: { runnerId: r.id, state: LIVE } });
      if (active < r.capacity) candidates.push({ r, active, load: active / Math.max(1, r.capacity) });
    }
    if (!candidates.length) throw new AppError('NO_RUNNER', 'Every eligible runner is at capacity. Stop a session or add a runner.');
    candidates.sort((a, b) => a.load - b.load || a.active - b.active);
    return candidates[0]!.r;
  }

  /**
   * Places a new session, agent or patrol, the one way: under the org's spawn lock the plan's limits
   * are checked, a runner with capacity that can reach the repository is picked and the CREATED row
   * is written (no two spawns take the last slot); then watchers are told. Returns the runner.
   */
  async function placeSession(s: {
    id: string;
    orgId: string;
    repo: { id: string; name: string; source: string };
    provider: ProviderId;
    kind: 'agent' | 'patrol';
    createdById: string;
    roomPath: string;
    mode: 'write' | 'read_only';
    goal: string;
    title: string;
  }) {
    const runner = await deps.limits.admit(s.orgId, { provider: s.provider, repo: s.repo, kind: s.kind }, async () => {
      const picked = await pickRunner(s.orgId, s.provider, s.repo.source);
      await db.session.create({
        data: {
          id: s.id,
          orgId: s.orgId,
          repoId: s.repo.id,
          runnerId: picked.id,
          createdById: s.createdById,
          provider: s.provider,
          kind: s.kind,
          roomPath: s.roomPath,
          mode: s.mode,
          goal: s.goal,
          title: s.title,
          state: 'CREATED',
          reason: `Placed on runner ${picked.name}`,
        },
      });
      return picked;
    });
    await publish(s.orgId, s.id);
    return runner;
  }

  /** Forward a viewer's flow-control ack to the runner that owns the session. */
  async function terminalAck(runnerId: string | null, sessionId: string, seq: number) {
    if (runnerId && gateway().isOnline(runnerId)) gateway().notify(runnerId, 'terminal:ack', { session_id: sessionId, seq });
  }

  function requireLive(s: { state: string }) {
    if ((TERMINAL_STATES as string[]).includes(s.state)) throw new AppError('CONFLICT', 'That session has ended.');
  }

  /**
   * May this principal type into the session, and on which runner? The check behind every
   * keystroke; the /ui namespace remembers its answer per socket (server/realtime/typing-rights.ts).
   */
  async function inputTarget(p: Principal, id: string): Promise<{ runnerId: string }> {
    requireRole(p, 'operator');
    const s = await db.session.findFirst({ where: { id, orgId: p.orgId }, select: { state: true, runnerId: true } });
    if (!s) throw notFound('That session');
    requireLive(s);
    if (!s.runnerId || !gateway().isOnline(s.runnerId)) throw new AppError('RUNNER_ERROR', 'The session’s runner is offline.');
    return { runnerId: s.runnerId };
  }

  /** Keys to a session whose right was checked (inputTarget): no database read on the way. */
  async function sendInput(target: { runnerId: string }, id: string, data: string) {
    if (!gateway().isOnline(target.runnerId)) throw new AppError('RUNNER_ERROR', 'The session’s runner is offline.');
    const res = await gateway().command(target.runnerId, 'session:input', { session_id: id, data, mode: 'raw' });
    if (!res.ok) throw new AppError('RUNNER_ERROR', res.error.message);
  }

  return {
    load,
    publish,
    publishMany,

    async list(orgId: string): Promise<SessionSummary[]> {
      const rows = await db.session.findMany({
        where: { orgId, OR: [{ state: LIVE }, { endedAt: { gt: new Date(Date.now() - RECENTLY_ENDED_MS) } }] },
        include: WITH_SUMMARY,
        orderBy: { createdAt: 'asc' },
      });
      return rows.map(sessionSummary);
    },

    async get(p: Principal, id: string) {
      return sessionSummary(await load(p.orgId, id));
    },

    async spawn(
      p: Principal,
      body: {
        repo_id: string;
        room_path: string;
        provider: ProviderId;
        title?: string;
        goal?: string;
        mode?: 'write' | 'read_only';
        cols?: number;
        rows?: number;
      },
    ): Promise<SessionSummary> {
      requireRole(p, 'operator');
      const repo = await db.repo.findFirst({ where: { id: body.repo_id, orgId: p.orgId } });
      if (!repo) throw notFound('That repository');
      if (repo.status !== 'ready' || !repo.tree) {
        throw new AppError('CONFLICT', `"${repo.name}" is not ready yet (${repo.status}${repo.error ? `: ${withoutServerDetail(repo.error)}` : ''}).`);
      }
      const tree = JSON.parse(repo.tree) as RepoTree;
      if (!tree.dirs.some((d) => d.path === body.room_path)) {
        throw new AppError('BAD_REQUEST', `"${body.room_path}" is not a directory of ${repo.name}.`);
      }
      const id = newId('sess');
      const mode = body.mode ?? 'write';
      const title = body.title || `${body.provider} in /${body.room_path}`;
      const runner = await placeSession({
        id,
        orgId: p.orgId,
        repo,
        provider: body.provider,
        kind: 'agent',
        createdById: p.userId,
        roomPath: body.room_path,
        mode,
        goal: body.goal ?? '',
        title,
      });
      const command: CreateSessionCommand = {
        session_id: id,
        org_id: p.orgId,
        repo_id: repo.id,
        repo: repoRefFromSource(repo.source),
        repo_source: repo.source,
        checkout: { type: 'branch', ref: repo.defaultBranch ?? tree.default_branch },
        room_path: body.room_path,
        provider: body.provider,
        task: { title, ...(body.goal ? { goal: body.goal } : {}) },
        policy: await deps.policy.effective(p.orgId, repo.id),
        // Decrypted only here, for this org's session; the runner injects and masks them.
        secrets: await deps.secrets.forSession(p.orgId),
        // Only the secrets an admin marked for it reach the environment (issue 11 item 3).
        inject_secrets: await deps.secrets.injectedNames(p.orgId),
        mode,
        cols: body.cols ?? 120,
        rows: body.rows ?? 32,
      };
      const res = await gateway().command(runner.id, 'session:create', command);
      // The reason is shown to everyone watching: without the runner's paths and hosts.
      if (!res.ok) return fail(p.orgId, id, `The runner refused the session: ${withoutServerDetail(res.error.message)}`);
      return sessionSummary(await load(p.orgId, id));
    },

    /**
     * A patrol's session: the shell provider running the patrol command non-interactively in a
     * read-only worktree of the default branch's newest commit (the runner fetches first), in the
     * building's hall. No org secrets: a patrol runs the repository's own scripts unattended.
     * Throws NO_RUNNER when no runner can take it now (the caller may retry later).
     */
    async spawnPatrol(input: { sessionId: string; orgId: string; repoId: string; createdById: string; spec: PatrolSpec; title: string }): Promise<SessionSummary> {
      const repo = await db.repo.findFirst({ where: { id: input.repoId, orgId: input.orgId } });
      if (!repo) throw notFound('That repository');
      if (repo.status !== 'ready' || !repo.tree) throw new AppError('CONFLICT', `"${repo.name}" is not ready yet (${repo.status}).`);
      const tree = JSON.parse(repo.tree) as RepoTree;
      const id = input.sessionId;
      // Patrols are metered like agents: the monthly cap and the plan's allowlists apply (the
      // concurrency limit counts agent sessions only).
      const runner = await placeSession({
        id,
        orgId: input.orgId,
        repo,
        provider: 'shell',
        kind: 'patrol',
        createdById: input.createdById,
        roomPath: '',
        mode: 'read_only',
        goal: input.spec.command,
        title: input.title,
      });
      const command: CreateSessionCommand = {
        session_id: id,
        org_id: input.orgId,
        repo_id: repo.id,
        repo: repoRefFromSource(repo.source),
        repo_source: repo.source,
        // What was pushed to the source, not approved merges only the runner's clone has.
        checkout: { type: 'source_branch', ref: repo.defaultBranch ?? tree.default_branch },
        room_path: '',
        provider: 'shell',
        task: { title: input.title },
        policy: {},
        secrets: {},
        mode: 'read_only',
        patrol: input.spec,
        cols: 120,
        rows: 32,
      };
      const res = await gateway().command(runner.id, 'session:create', command);
      if (!res.ok) {
        await fail(input.orgId, id, `The runner refused the patrol: ${withoutServerDetail(res.error.message)}`);
        throw new AppError('RUNNER_ERROR', `The runner refused the patrol: ${res.error.message}`);
      }
      return sessionSummary(await load(input.orgId, id));
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

    /** Pause (SIGSTOP of the process group) or resume (SIGCONT) on the session's runner. */
    async control(p: Principal, id: string, action: 'pause' | 'resume'): Promise<SessionSummary> {
      requireRole(p, 'operator');
      const s = await load(p.orgId, id);
      requireLive(s);
      if (action === 'pause' && s.state !== 'RUNNING' && s.state !== 'WAITING_FOR_APPROVAL') {
        throw new AppError('CONFLICT', `Only a running session can be paused; this one is ${s.state.toLowerCase().replaceAll('_', ' ')}.`);
      }
      if (action === 'resume' && s.state !== 'PAUSED_BY_HUMAN') throw new AppError('CONFLICT', 'That session is not paused.');
      if (action === 'resume') await deps.limits.checkResume(p.orgId);
      if (!s.runnerId || !gateway().isOnline(s.runnerId)) throw new AppError('RUNNER_ERROR', 'The session’s runner is offline.');
      const res = await gateway().command(s.runnerId, action === 'pause' ? 'session:pause' : 'session:resume', { session_id: id });
      if (!res.ok) throw new AppError(res.error.code, `The runner could not ${action} the session: ${res.error.message}`);
      return sessionSummary(await stateMovedFrom(p.orgId, id, s.state));
    },

    async input(p: Principal, id: string, data: string) {
      await sendInput(await inputTarget(p, id), id, data);
    },

    inputTarget,
    sendInput,

    async resize(p: Principal, id: string, cols: number, rows: number) {
      requireRole(p, 'operator');
      const s = await load(p.orgId, id);
      requireLive(s);
      if (!s.runnerId || !gateway().isOnline(s.runnerId)) return;
      await gateway().command(s.runnerId, 'session:resize', { session_id: id, cols, rows });
    },

    /** The last viewer left: everything stored counts as consumed, so the runner never waits for acks nobody will send. */
    async releaseFlowControl(sessionId: string) {
      const s = await db.session.findUnique({ where: { id: sessionId }, select: { lastSeq: true, runnerId: true } });
      if (s) await terminalAck(s.runnerId, sessionId, s.lastSeq);
    },

    terminalAck,
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
