'use client';
import Link from 'next/link';
import type { AlertSummary, DeterministicAgent, RepoHealth, RepoSummary, RunSummary, SessionSummary } from '../../protocol';
import { PATROL_KIND_LABELS } from '../../protocol/patrols';
import { healthLabel, activityLabel, STRINGS } from './strings';

export interface WorldListProps {
  repos: RepoSummary[];
  sessions: SessionSummary[];
  selectedRoom: { repoId: string; roomPath: string } | null;
  selectedSessionId: string | null;
  canOperate: boolean;
  onSelectRoom(repoId: string, roomPath: string): void;
  onOpenSession(id: string): void;
  onStopSession(id: string): void;
  alerts?: AlertSummary[];
  health?: RepoHealth[];
  selectedAlertId?: string | null;
  onOpenAlert?(id: string): void;
  /** The workshop: deterministic agents and their runs in progress. */
  agents?: DeterministicAgent[];
  runs?: RunSummary[];
}

/** Every building, room and session of the canvas as real buttons: the village without a mouse. */
export default function WorldList(props: WorldListProps) {
  const { repos, sessions, selectedRoom, selectedSessionId } = props;
  return (
    <nav className="world-list" aria-label="Buildings, rooms and sessions">
      <h2 className="panel-title">Sessions</h2>
      {sessions.length === 0 ? (
        <p className="muted">No agents yet. Pick a room and spawn one.</p>
      ) : (
        <ul className="session-list">
          {sessions.map((s) => {
            const repo = repos.find((r) => r.id === s.repo_id);
            return (
              <li key={s.id} className={s.id === selectedSessionId ? 'selected' : undefined} data-session-id={s.id}>
                <div className="session-line">
                  <span className={`dot state-${s.state.toLowerCase()}`} aria-hidden />
                  <span className="session-title">{s.title}</span>
                  {s.kind === 'patrol' && <span className="state-pill patrol-pill">patrol</span>}
                </div>
                <div className="muted small">
                  {repo?.name ?? 'repository'}/{s.room_path || '(root)'} · {activityLabel(s)}
                  {s.runner_lost ? ' — runner lost' : s.reason ? ` — ${s.reason}` : ''}
                </div>
                <div className="row">
                  <button type="button" className="btn btn-small" onClick={() => props.onOpenSession(s.id)} aria-label={`${STRINGS.openTerminal}: ${s.title}`}>
                    {STRINGS.openTerminal}
                  </button>
                  {props.canOperate && s.state !== 'COMPLETED' && s.state !== 'FAILED' && (
                    <button type="button" className="btn btn-small btn-danger" onClick={() => props.onStopSession(s.id)} aria-label={`${STRINGS.stopSession}: ${s.title}`}>
                      {STRINGS.stopSession}
                    </button>
                  )}
                </div>
              </li>
            );
          })}
        </ul>
      )}
      <h2 className="panel-title">{STRINGS.alertsTitle}</h2>
      {(props.alerts ?? []).length === 0 ? (
        <p className="muted small">{STRINGS.noAlerts}</p>
      ) : (
        <ul className="session-list alert-list" aria-label="Alerts from patrols">
          {(props.alerts ?? []).map((a) => {
            const repo = repos.find((r) => r.id === a.repo_id);
            return (
              <li key={a.id} className={a.id === props.selectedAlertId ? 'selected' : undefined} data-alert-id={a.id}>
                <button type="button" className="room-button alert-button" onClick={() => props.onOpenAlert?.(a.id)} aria-label={`${PATROL_KIND_LABELS[a.kind]} alert in ${repo?.name ?? 'repository'}/${a.room_path || '(hall)'}`}>
                  <span className="bug-dot" aria-hidden /> {repo?.name ?? 'repository'}/{a.room_path || '(hall)'}
                </button>
                <div className="muted small alert-line">{a.message}</div>
              </li>
            );
          })}
        </ul>
      )}
      {(props.agents?.length ?? 0) > 0 && <WorkshopEntry agents={props.agents!} runs={props.runs ?? []} />}
      <h2 className="panel-title">Buildings</h2>
      {repos.map((repo) => {
        const h = props.health?.find((x) => x.repo_id === repo.id);
        return (
        <section key={repo.id} className="building-entry" aria-label={`Building ${repo.name}`}>
          <h3>
            {repo.name} <span className="muted small">{repo.status === 'ready' ? repo.default_branch : repo.status}</span>
          </h3>
          <p className="small building-health" data-testid={`health-${repo.name}`}>
            <span className={`health-text ${h?.health === null || h?.health === undefined ? '' : h.health >= 0.8 ? 'ok-text' : h.health >= 0.5 ? 'warn-text' : 'bad-text'}`}>{healthLabel(h?.health)}</span>
            {h?.build_failing && <span className="state-pill state-failed"> build failing</span>}
            {h && h.open_alerts > 0 && <span className="muted"> · {h.open_alerts} alert{h.open_alerts === 1 ? '' : 's'}</span>}
          </p>
          {repo.status === 'error' && <p className="error-line">{repo.error}</p>}
          {repo.status === 'pending' && <p className="muted small">Waiting for a runner to scan it…</p>}
          {repo.tree && (
            <ul className="room-list">
              {repo.tree.dirs.slice(0, 400).map((d) => {
                const depth = d.path === '' ? 0 : d.path.split('/').length;
                const selected = selectedRoom?.repoId === repo.id && selectedRoom.roomPath === d.path;
                return (
                  <li key={d.path} style={{ paddingLeft: depth * 12 }}>
                    <button
                      type="button"
                      className={`room-button${selected ? ' selected' : ''}`}
                      aria-pressed={selected}
                      onClick={() => props.onSelectRoom(repo.id, d.path)}
                    >
                      {d.path === '' ? '/ (hall)' : `${d.path.split('/').at(-1)}/`}
                    </button>
                  </li>
                );
              })}
            </ul>
          )}
        </section>
        );
      })}
    </nav>
  );
}

/** The workshop building in the list: its agents and the runs at its benches, each a link. */
function WorkshopEntry({ agents, runs }: { agents: DeterministicAgent[]; runs: RunSummary[] }) {
  const working = runs.filter((r) => r.status === 'queued' || r.status === 'running');
  return (
    <section className="building-entry" aria-label="Building Workshop">
      <h3>
        <Link href="/workshop">Workshop</Link>{' '}
        <span className="muted small">
          {agents.length} deterministic {agents.length === 1 ? 'agent' : 'agents'} · {working.length} running
        </span>
      </h3>
      {working.length > 0 && (
        <ul className="room-list">
          {working.map((r) => (
            <li key={r.id} data-run-id={r.id}>
              <Link className="room-button" href={`/workshop?run=${encodeURIComponent(r.id)}`}>
                {r.agent_name} — {r.status} on {r.runner_name}
              </Link>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
