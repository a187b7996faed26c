'use client';
import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { PatrolRunSummary, PatrolSummary, RepoHealth, RepoPatrols, SessionSummary, WebhookInfo } from '../../protocol';
import { PATROL_KIND_LABELS } from '../../protocol';
import TerminalPanel from '../terminal/TerminalPanel';
import { patchLive } from '../realtime/live-cache';
import { getUiSocket } from '../realtime/socket';
import { api, ApiRequestError } from './api';
import Header from './Header';
import { healthLabel, STRINGS } from './strings';
import { useRequireLogin } from './use-auth-redirect';
import { useWorld } from './use-world';
import { useRole } from './use-role';

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

/** A colour bar and the number: the same rule as the building's bar in the village. */
function HealthMeter({ health }: { health: RepoHealth }) {
  const h = health.health;
  const color = h === null ? 'var(--muted)' : h >= 0.8 ? 'var(--ok)' : h >= 0.5 ? 'var(--warn)' : 'var(--bad)';
  return (
    <span data-testid="patrols-health">
      <span className="health-meter" role="img" aria-label={healthLabel(h)}>
        <span style={{ width: `${Math.round((h ?? 0) * 100)}%`, background: color }} />
      </span>
      {healthLabel(h)}
      {health.build_failing && <span className="state-pill state-failed"> build failing</span>}
      {health.open_alerts > 0 && <span className="muted"> · {health.open_alerts} open alert{health.open_alerts === 1 ? '' : 's'}</span>}
    </span>
  );
}

/** One patrol's row: admins edit command, schedule and enabled; operators run it now. */
function PatrolRow({ patrol, isAdmin, canOperate, onError }: { patrol: PatrolSummary; isAdmin: boolean; canOperate: boolean; onError(msg: string | null): void }) {
  const qc = useQueryClient();
  const [command, setCommand] = useState(patrol.command);
  const [schedule, setSchedule] = useState(patrol.schedule);
  useEffect(() => {
    setCommand(patrol.command);
    setSchedule(patrol.schedule);
  }, [patrol.command, patrol.schedule]);
  const label = PATROL_KIND_LABELS[patrol.kind];
  const fail = (e: unknown) => onError(e instanceof ApiRequestError ? e.message : String(e));
  const refresh = () => void qc.invalidateQueries({ queryKey: ['patrols', patrol.repo_id] });
  const save = useMutation({
    mutationFn: (body: { command?: string; schedule?: string; enabled?: boolean }) => api<PatrolSummary>(`/api/patrols/${patrol.id}`, { method: 'PATCH', body }),
    onSuccess: () => {
      onError(null);
      refresh();
    },
    onError: fail,
  });
  const run = useMutation({
    mutationFn: () => api<PatrolRunSummary>(`/api/patrols/${patrol.id}/run`, { method: 'POST' }),
    onSuccess: () => {
      onError(null);
      refresh();
    },
    onError: fail,
  });
  const dirty = command !== patrol.command || schedule !== patrol.schedule;
  return (
    <tr data-patrol-kind={patrol.kind}>
      <td className="nowrap">
        <strong>{label}</strong>
      </td>
      <td className="cmd">
        {isAdmin ? (
          <input type="text" aria-label={`${label} command`} value={command} placeholder="no command found — set one" onChange={(e) => setCommand(e.target.value)} />
        ) : (
          <code>{patrol.command || '—'}</code>
        )}
      </td>
      <td className="sched">
        {isAdmin ? <input type="text" aria-label={`${label} schedule`} value={schedule} placeholder="cron, or empty" onChange={(e) => setSchedule(e.target.value)} /> : <code>{patrol.schedule || '—'}</code>}
      </td>
      <td>
        <label className="check">
          <input
            type="checkbox"
            checked={patrol.enabled}
            disabled={!isAdmin || save.isPending}
            aria-label={`${label} enabled`}
            onChange={(e) => save.mutate({ enabled: e.target.checked })}
          />{' '}
          {patrol.enabled ? 'on' : 'off'}
        </label>
      </td>
      <td className="nowrap">
        {patrol.last_status ? <span className={`run-status run-${patrol.last_status}`}>{patrol.last_status}</span> : <span className="muted">never run</span>}
      </td>
      <td className="small nowrap">{patrol.next_run_at ? when(patrol.next_run_at) : <span className="muted">—</span>}</td>
      <td className="nowrap">
        {isAdmin && (
          <button
            type="button"
            className="btn btn-small"
            disabled={!dirty || save.isPending}
            onClick={() => save.mutate({ ...(command !== patrol.command ? { command } : {}), ...(schedule !== patrol.schedule ? { schedule } : {}) })}
            aria-label={`${STRINGS.savePatrol} ${label}`}
          >
            {STRINGS.savePatrol}
          </button>
        )}{' '}
        {canOperate && (
          <button type="button" className="btn btn-small btn-primary" disabled={!patrol.command || run.isPending} onClick={() => run.mutate()} aria-label={`${STRINGS.runNow}: ${label}`}>
            {STRINGS.runNow}
          </button>
        )}
      </td>
    </tr>
  );
}

function WebhookCard({ repoId }: { repoId: string }) {
  const qc = useQueryClient();
  const [shown, setShown] = useState(false);
  const info = useQuery({ queryKey: ['webhook', repoId], queryFn: () => api<WebhookInfo>(`/api/repos/${repoId}/webhook`) });
  const rotate = useMutation({
    mutationFn: () => api<WebhookInfo>(`/api/repos/${repoId}/webhook/rotate`, { method: 'POST' }),
    onSuccess: (d) => qc.setQueryData(['webhook', repoId], d),
  });
  if (!info.data) return null;
  const url = typeof window === 'undefined' ? info.data.path : `${window.location.origin}${info.data.path}`;
  return (
    <section className="card webhook-box" aria-label={STRINGS.webhookTitle}>
      <h2>{STRINGS.webhookTitle}</h2>
      <p className="small">
        In GitHub: <em>Settings → Webhooks → Add webhook</em>. Payload URL <code>{url}</code>, content type <code>application/json</code>, the
        secret below, event <em>Just the push event</em>. A push to the default branch fetches the repository and runs its enabled patrols; a delivery
        without the right signature gets 401 and runs nothing.
      </p>
      <p className="small">
        Secret: <code data-testid="webhook-secret">{shown ? info.data.secret : '••••••••••••••••'}</code>{' '}
        <button type="button" className="btn btn-small" onClick={() => setShown((v) => !v)}>
          {shown ? 'Hide' : STRINGS.showSecret}
        </button>{' '}
        <button type="button" className="btn btn-small btn-danger" disabled={rotate.isPending} onClick={() => rotate.mutate()}>
          {STRINGS.rotateSecret}
        </button>
        <span className="muted"> · last delivery {when(info.data.last_delivery_at)}</span>
      </p>
    </section>
  );
}

/** Replays a run's session (its terminal, read-only). */
function RunLog({ sessionId, onClose }: { sessionId: string; onClose(): void }) {
  const session = useQuery({ queryKey: ['session', sessionId], queryFn: () => api<SessionSummary>(`/api/sessions/${sessionId}`), refetchInterval: 2000 });
  if (!session.data) return <p className="muted">Loading the log…</p>;
  return (
    <div className="patrol-log">
      <TerminalPanel session={session.data} readOnly onClose={onClose} onStop={() => undefined} />
    </div>
  );
}

/** The patrols page: per repository its patrols (configure, run now, enable/disable), health, webhook and history with logs. */
export default function PatrolsScreen() {
  const me = useRequireLogin();
  const world = useWorld(me.isSuccess);
  const qc = useQueryClient();
  const [repoId, setRepoId] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  const [logOf, setLogOf] = useState<string | null>(null);
  const { atLeast } = useRole();
  const isAdmin = atLeast('admin');
  const canOperate = atLeast('operator');

  useEffect(() => {
    const wanted = new URLSearchParams(window.location.search).get('repo');
    if (!repoId && world.data?.repos.length) setRepoId(world.data.repos.find((r) => r.id === wanted)?.id ?? world.data.repos[0]!.id);
  }, [world.data, repoId]);

  const data = useQuery({ queryKey: ['patrols', repoId], queryFn: () => api<RepoPatrols>(`/api/repos/${repoId}/patrols`), enabled: !!repoId });

  useEffect(() => {
    if (!repoId) return;
    const socket = getUiSocket();
    const patch = (fn: (d: RepoPatrols) => RepoPatrols) => patchLive<RepoPatrols>(qc, ['patrols', repoId], fn);
    const onPatrol = (p: PatrolSummary) => p.repo_id === repoId && patch((d) => ({ ...d, patrols: d.patrols.map((x) => (x.id === p.id ? p : x)) }));
    const onRun = (r: PatrolRunSummary) =>
      r.repo_id === repoId && patch((d) => ({ ...d, runs: d.runs.some((x) => x.id === r.id) ? d.runs.map((x) => (x.id === r.id ? r : x)) : [r, ...d.runs].slice(0, 50) }));
    const onHealth = (h: RepoHealth) => h.repo_id === repoId && patch((d) => ({ ...d, health: h }));
    socket.on('patrol:updated', onPatrol);
    socket.on('patrol-run:updated', onRun);
    socket.on('health:updated', onHealth);
    return () => {
      socket.off('patrol:updated', onPatrol);
      socket.off('patrol-run:updated', onRun);
      socket.off('health:updated', onHealth);
    };
  }, [repoId, qc]);

  const setup = useMutation({
    mutationFn: () => api<RepoPatrols>(`/api/repos/${repoId}/patrols`, { method: 'POST' }),
    onSuccess: (d) => {
      setMessage(null);
      qc.setQueryData(['patrols', repoId], d);
    },
    onError: (e) => setMessage(e instanceof ApiRequestError ? e.message : String(e)),
  });

  if (!me.data || !world.data) return <main className="center-note">Loading patrols…</main>;
  const repo = world.data.repos.find((r) => r.id === repoId);
  const d = data.data;

  return (
    <div className="app-shell">
      <Header me={me.data} runners={world.data.runners} />
      <main className="settings patrols">
        <h1>{STRINGS.patrolsTitle}</h1>
        <p className="muted small">
          Lint, tests, build, a dependency check and a security check per repository, each run by a runner in a read-only worktree of the newest commit — on a
          schedule, on a push, or now. Failures become alerts (bugs in the rooms of the files they point to); results set each building’s health.
        </p>
        <div className="repo-picker">
          <label className="small" htmlFor="patrol-repo">
            Repository
          </label>
          <select id="patrol-repo" value={repoId} onChange={(e) => setRepoId(e.target.value)}>
            {world.data.repos.map((r) => (
              <option key={r.id} value={r.id}>
                {r.name}
              </option>
            ))}
          </select>
          {d && <HealthMeter health={d.health} />}
          {d && <span className="muted small">scheduler: {d.scheduler === 'bullmq' ? 'BullMQ (Redis)' : 'in-process'}</span>}
        </div>
        {message && (
          <p className="error-line" role="alert">
            {message}
          </p>
        )}
        {d && d.patrols.length === 0 && (
          <section className="card">
            <h2>No patrols yet</h2>
            {isAdmin ? (
              <>
                <p className="small">A runner reads {repo?.name ?? 'the repository'} and suggests commands (package.json scripts, Makefile, Python/Go/Rust defaults) plus the offline dependency and security checks.</p>
                <button type="button" className="btn btn-primary" disabled={setup.isPending || repo?.status !== 'ready'} onClick={() => setup.mutate()}>
                  {setup.isPending ? 'Reading the repository…' : STRINGS.setUpPatrols}
                </button>
              </>
            ) : (
              <p className="small muted">{STRINGS.adminsOnly}</p>
            )}
          </section>
        )}
        {d && d.patrols.length > 0 && (
          <section className="card" aria-label="Patrols of this repository">
            <table className="pixel-table patrol-table">
              <thead>
                <tr>
                  <th>Patrol</th>
                  <th>Command</th>
                  <th>Schedule (cron)</th>
                  <th>Enabled</th>
                  <th>Last</th>
                  <th>Next run</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {d.patrols.map((p) => (
                  <PatrolRow key={p.id} patrol={p} isAdmin={isAdmin} canOperate={canOperate} onError={setMessage} />
                ))}
              </tbody>
            </table>
            <p className="small muted">
              Cron: 5 fields (minute hour day month weekday) or 6 with seconds first, in the control plane’s local time; empty = only on pushes and “run now”.
              <code>av-check deps</code> and <code>av-check secrets</code> are the runner’s offline checks.
            </p>
          </section>
        )}
        {d && isAdmin && d.webhook_configured && <WebhookCard repoId={repoId} />}
        {d && (
          <section className="card" aria-label="Patrol history">
            <h2>History</h2>
            {d.runs.length === 0 ? (
              <p className="muted small">No runs yet.</p>
            ) : (
              <table className="pixel-table">
                <thead>
                  <tr>
                    <th>When</th>
                    <th>Patrol</th>
                    <th>Trigger</th>
                    <th>Result</th>
                    <th>Summary</th>
                    <th>Commit</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  {d.runs.map((r) => (
                    <tr key={r.id} data-run-id={r.id} data-run-kind={r.kind} data-run-status={r.status}>
                      <td className="small nowrap">{when(r.created_at)}</td>
                      <td className="nowrap">{PATROL_KIND_LABELS[r.kind]}</td>
                      <td className="small">
                        {r.trigger === 'manual' ? `run now · ${r.triggered_by}` : r.trigger}
                      </td>
                      <td>
                        <span className={`run-status run-${r.status}`}>{r.status}</span>
                      </td>
                      <td className="small">{r.summary}</td>
                      <td className="small">
                        <code>{r.commit_sha ? r.commit_sha.slice(0, 8) : '—'}</code>
                      </td>
                      <td>
                        {r.session_id && (
                          <button type="button" className="btn btn-small" onClick={() => setLogOf(r.session_id)} aria-label={`${STRINGS.showLog}: ${PATROL_KIND_LABELS[r.kind]} ${when(r.created_at)}`}>
                            {STRINGS.showLog}
                          </button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            {logOf && <RunLog key={logOf} sessionId={logOf} onClose={() => setLogOf(null)} />}
          </section>
        )}
      </main>
    </div>
  );
}
