'use client';
import dynamic from 'next/dynamic';
import { useMemo, useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { WORKSHOP_ID } from '../world/layout';
import type { ProviderId, SessionSummary } from '../../protocol';
import { LIMIT_MESSAGES, providerAllowed } from '../../protocol';
import { useLimits } from '../usage/use-limits';
import TerminalPanel from '../terminal/TerminalPanel';
import ReplayBadge from '../terminal/ReplayBadge';
import { useReplayedSessions } from '../terminal/replay-signal';
import SessionDetails from './SessionDetails';
import AlertPanel from './AlertPanel';
import { useApprovals } from '../approvals/use-approvals';
import { api, ApiRequestError } from './api';
import Header from './Header';
import { STRINGS } from './strings';
import { useRequireLogin } from './use-auth-redirect';
import { useWorld } from './use-world';
import { useDtaRuns } from '../workshop/use-dta-runs';
import { useQuestList } from '../quests/use-quests';
import { isQuestWorker, questOfWorker } from '../world/quest-workers';
import WorldList from './WorldList';
import { useRole } from './use-role';
import RadarPopover from '../radar/RadarPopover';
import EndedSessions from '../story/EndedSessions';
import { useRadar } from '../radar/use-radar';

const Village = dynamic(() => import('../world/Village'), {
  ssr: false,
  loading: () => <div className="village-loading">Drawing the village…</div>,
});

/** Dock heights in px: big enough for a prompt, never hiding the whole village. */
const DOCK_MIN = 160;
const DOCK_DEFAULT = 320;

export default function VillageScreen() {
  const me = useRequireLogin();
  const router = useRouter();
  const world = useWorld(me.isSuccess);
  const dtaRuns = useDtaRuns(me.isSuccess);
  const quests = useQuestList(me.isSuccess);
  const approvals = useApprovals(me.isSuccess);
  const radar = useRadar(me.isSuccess);
  const [radarOpenId, setRadarOpenId] = useState<string | null>(null);
  const [selectedRoom, setSelectedRoom] = useState<{ repoId: string; roomPath: string } | null>(null);
  const [openSessionId, setOpenSessionIdRaw] = useState<string | null>(null);
  const [openAlertId, setOpenAlertIdRaw] = useState<string | null>(null);
  // The dock shows one thing: a terminal or an alert's card.
  const setOpenSessionId = (id: string | null) => {
    setOpenSessionIdRaw(id);
    if (id) setOpenAlertIdRaw(null);
  };
  const setOpenAlertId = (id: string | null) => {
    setOpenAlertIdRaw(id);
    if (id) setOpenSessionIdRaw(null);
  };
  const [provider, setProvider] = useState<ProviderId>('shell');
  const [dockHeight, setDockHeight] = useState(DOCK_DEFAULT);
  const [actionError, setActionError] = useState<string | null>(null);
  const [goal, setGoal] = useState('');
  const [mode, setMode] = useState<'write' | 'read_only'>('write');

  const { atLeast } = useRole();
  const canOperate = atLeast('operator');
  const sessions = useMemo(() => (world.data?.sessions ?? []).filter((s) => s.state !== 'COMPLETED'), [world.data]);
  // A terminal replaying its past puts its sprite where it stood then (issue 17).
  const { sessions: villageSessions, onArrived } = useReplayedSessions(sessions);
  const providers = useMemo(() => {
    const set = new Set<ProviderId>();
    for (const r of world.data?.runners ?? []) if (r.online) r.providers.forEach((p) => set.add(p));
    return [...set];
  }, [world.data]);
  // Load from the live session list (always current), not from the last heartbeat.
  const liveOn = (runnerId: string) =>
    (world.data?.sessions ?? []).filter((s) => s.runner_id === runnerId && s.state !== 'COMPLETED' && s.state !== 'FAILED').length;
  const room = selectedRoom ?? (world.data?.repos[0]?.tree ? { repoId: world.data.repos[0].id, roomPath: '' } : null);
  const roomRepo = world.data?.repos.find((r) => r.id === room?.repoId);
  const openSession = world.data?.sessions.find((s) => s.id === openSessionId) ?? null;
  const limits = useLimits(me.isSuccess && canOperate);
  // The server refuses these spawns; say so before the click, in the same words.
  const plan = limits.data;
  const spawnBlock = !plan
    ? null
    : !plan.spawn.allowed
      ? plan.spawn.reason
      : !providerAllowed(plan.allowed_providers, provider)
        ? LIMIT_MESSAGES.provider(plan.plan.name, provider, plan.allowed_providers)
        : room && plan.blocked_repo_ids.includes(room.repoId)
          ? LIMIT_MESSAGES.repo(plan.plan.name, roomRepo?.name ?? 'this repository')
          : null;
  const openAlert = world.data?.alerts.find((a) => a.id === openAlertId) ?? null;
  const radarOpen = radar.data?.overlaps.find((o) => o.id === radarOpenId) ?? null;

  const spawn = useMutation({
    mutationFn: () =>
      api<SessionSummary>('/api/sessions', {
        body: { repo_id: room!.repoId, room_path: room!.roomPath, provider, mode, ...(goal.trim() ? { goal: goal.trim() } : {}) },
      }),
    onSuccess: (s) => {
      setActionError(null);
      setOpenSessionId(s.id);
    },
    onError: (e) => setActionError(e instanceof ApiRequestError ? e.message : String(e)),
  });
  const stop = useMutation({
    mutationFn: (id: string) => api<SessionSummary>(`/api/sessions/${id}/stop`, { method: 'POST' }),
    onError: (e) => setActionError(e instanceof ApiRequestError ? e.message : String(e)),
  });
  const control = useMutation({
    mutationFn: ({ id, action }: { id: string; action: 'pause' | 'resume' }) =>
      api<SessionSummary>(`/api/sessions/${id}/${action}`, { method: 'POST' }),
    onError: (e) => setActionError(e instanceof ApiRequestError ? e.message : String(e)),
  });

  if (me.isPending || (me.isSuccess && world.isPending)) return <main className="center-note">Opening the village gates…</main>;
  if (me.isError) return <main className="center-note">{me.error instanceof ApiRequestError && me.error.code === 'UNAUTHORIZED' ? 'Redirecting…' : me.error.message}</main>;
  if (world.isError || !world.data) return <main className="center-note error-line">{world.error?.message ?? 'No data'}</main>;

  return (
    <div className="app-shell">
      <Header me={me.data} runners={world.data.runners} />
      <div className="app-body">
        <aside className="side-panel">
          <section className="spawn-box" aria-label="Spawn an agent">
            <h2 className="panel-title">Room</h2>
            <p className="room-name" data-testid="selected-room">
              {roomRepo ? `${roomRepo.name}/${room?.roomPath || ''}` : 'No room selected'}
            </p>
            {canOperate && (
              <div className="row">
                <label className="sr-only" htmlFor="provider">
                  Provider
                </label>
                <select id="provider" value={provider} onChange={(e) => setProvider(e.target.value as ProviderId)}>
                  {(providers.length ? providers : (['shell'] as ProviderId[])).map((p) => (
                    <option key={p} value={p} disabled={!providers.includes(p) || (plan ? !providerAllowed(plan.allowed_providers, p) : false)}>
                      {p}
                    </option>
                  ))}
                </select>
                <label className="sr-only" htmlFor="mode">
                  Workspace mode
                </label>
                <select id="mode" value={mode} onChange={(e) => setMode(e.target.value as 'write' | 'read_only')}>
                  <option value="write">write</option>
                  <option value="read_only">read-only</option>
                </select>
                <button
                  type="button"
                  className="btn btn-primary"
                  disabled={!room || spawn.isPending || !providers.includes(provider) || spawnBlock !== null}
                  aria-describedby={spawnBlock ? 'spawn-limit' : undefined}
                  onClick={() => spawn.mutate()}
                >
                  {spawn.isPending ? 'Spawning…' : STRINGS.spawnButton}
                </button>
              </div>
            )}
            {canOperate && provider !== 'shell' && (
              <label className="small">
                Task for the agent
                <textarea rows={2} value={goal} onChange={(e) => setGoal(e.target.value)} placeholder="Fix the failing test in this room" />
              </label>
            )}
            {!providers.length && <p className="muted small">{STRINGS.noRunner}</p>}
            {canOperate && plan && (
              <p className="muted small plan-line" data-testid="plan-line">
                {STRINGS.limitsLine} {plan.plan.name} · {plan.concurrency.used}/{plan.concurrency.max} sessions · {plan.minutes.used}
                {plan.minutes.cap !== null ? `/${plan.minutes.cap}` : ''} agent-min this month
              </p>
            )}
            {canOperate && spawnBlock && (
              <p className="warn-line" id="spawn-limit" role="status" data-testid="spawn-limit">
                {spawnBlock}
              </p>
            )}
            {actionError && (
              <p className="error-line" role="alert">
                {actionError}
              </p>
            )}
          </section>
          <WorldList
            repos={world.data.repos}
            // A patrol that ended lives on in its alerts and the patrols page, not in this list.
            sessions={sessions.filter((s) => !(s.kind === 'patrol' && s.state === 'FAILED'))}
            alerts={world.data.alerts}
            health={world.data.health}
            selectedAlertId={openAlertId}
            onOpenAlert={setOpenAlertId}
            selectedRoom={room}
            selectedSessionId={openSessionId}
            canOperate={canOperate}
            onSelectRoom={(repoId, roomPath) => setSelectedRoom({ repoId, roomPath })}
            onOpenSession={setOpenSessionId}
            onStopSession={(id) => stop.mutate(id)}
            agents={world.data.agents}
            runs={world.data.runs}
          />
          <EndedSessions room={room} roomLabel={roomRepo ? `${roomRepo.name}/${room?.roomPath || ''}` : ''} />
          <h2 className="panel-title">Runners</h2>
          <ul className="runner-list">
            {world.data.runners.map((r) => ({ ...r, active_sessions: liveOn(r.id) })).map((r) => (
              <li key={r.id} title={`${r.hostname} · providers ${r.providers.join(', ')}${r.labels.length ? ` · ${r.labels.join(', ')}` : ''}`}>
                <span className={`dot ${r.online ? 'state-running' : 'state-failed'}`} aria-hidden /> {r.name}{' '}
                <span className="load-bar" role="img" aria-label={`load ${r.active_sessions} of ${r.capacity}`}>
                  <span style={{ width: `${Math.min(100, (100 * r.active_sessions) / Math.max(1, r.capacity))}%` }} />
                </span>{' '}
                <span className="muted">
                  {r.online ? `${r.active_sessions}/${r.capacity}` : 'offline'}
                  {r.labels.length ? ` · ${r.labels.join(', ')}` : ''}
                </span>
              </li>
            ))}
          </ul>
        </aside>
        <main className="world-column">
          <div className="village-wrap">
            <ReplayBadge />
            <Village
              repos={world.data.repos}
              sessions={villageSessions}
              onArrived={onArrived}
              selectedSessionId={openSessionId}
              selectedRoom={room}
              workshopAgents={world.data.agents.length}
              runs={world.data.runs}
              dtaRuns={dtaRuns.data}
              quests={quests.data}
              onSelectSession={(id) =>
                id.startsWith('run_')
                  ? router.push(`/workshop?run=${encodeURIComponent(id)}`)
                  : id.startsWith('dta_')
                    ? router.push('/workshop')
                    : isQuestWorker(id)
                      ? router.push(`/quests?quest=${encodeURIComponent(questOfWorker(id))}`)
                      : setOpenSessionId(id)
              }
              onSelectRoom={(repoId, roomPath) => (repoId === WORKSHOP_ID ? router.push('/workshop') : setSelectedRoom({ repoId, roomPath }))}
              alerts={world.data.alerts}
              health={world.data.health}
              selectedAlertId={openAlertId}
              onSelectAlert={setOpenAlertId}
              radar={radar.data?.overlaps}
              onRadar={(id) => id && setRadarOpenId(id)}
            />
            {radarOpen && (
              <RadarPopover
                key={radarOpen.id}
                overlap={radarOpen}
                nameOf={(id) => world.data?.sessions.find((s) => s.id === id)?.title ?? id}
                onClose={() => setRadarOpenId(null)}
              />
            )}
          </div>
          {openAlert && !openSession && (
            <div className="dock" style={{ height: dockHeight }}>
              <AlertPanel
                key={openAlert.id}
                alert={openAlert}
                repo={world.data.repos.find((r) => r.id === openAlert.repo_id)}
                canOperate={canOperate}
                providers={providers}
                onClose={() => setOpenAlertId(null)}
                onSpawned={(s) => {
                  setSelectedRoom({ repoId: s.repo_id, roomPath: s.room_path });
                  setOpenSessionId(s.id);
                }}
              />
            </div>
          )}
          {openSession && (
            <div className="dock" style={{ height: dockHeight }}>
              <div
                className="dock-handle"
                role="separator"
                aria-orientation="horizontal"
                aria-label="Resize the terminal dock (arrow keys)"
                aria-valuenow={dockHeight}
                tabIndex={0}
                onKeyDown={(e) => {
                  if (e.key === 'ArrowUp') setDockHeight((h) => Math.min(window.innerHeight - 120, h + 40));
                  if (e.key === 'ArrowDown') setDockHeight((h) => Math.max(DOCK_MIN, h - 40));
                }}
                onPointerDown={(e) => {
                  const startY = e.clientY;
                  const startH = dockHeight;
                  const move = (ev: PointerEvent) =>
                    setDockHeight(Math.max(DOCK_MIN, Math.min(window.innerHeight - 120, startH + startY - ev.clientY)));
                  const up = () => {
                    window.removeEventListener('pointermove', move);
                    window.removeEventListener('pointerup', up);
                  };
                  window.addEventListener('pointermove', move);
                  window.addEventListener('pointerup', up);
                }}
              />
              <div className="dock-body">
                <TerminalPanel
                  key={openSession.id}
                  session={openSession}
                  readOnly={!canOperate || openSession.kind === 'patrol'}
                  onClose={() => setOpenSessionId(null)}
                  onStop={() => stop.mutate(openSession.id)}
                />
                <SessionDetails
                  session={openSession}
                  canOperate={canOperate}
                  canDecide={atLeast('approver')}
                  approvals={(approvals.data ?? []).filter((a) => a.session_id === openSession.id && a.state === 'pending')}
                  onPause={() => control.mutate({ id: openSession.id, action: 'pause' })}
                  onResume={() => control.mutate({ id: openSession.id, action: 'resume' })}
                />
              </div>
            </div>
          )}
        </main>
      </div>
    </div>
  );
}
