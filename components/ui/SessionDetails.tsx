'use client';
import type { ApprovalSummary, SessionSummary } from '../../protocol';
import ApprovalCard from '../approvals/ApprovalCard';
import RedactionReceipt from './RedactionReceipt';
import { TERMINAL_STATES } from '../../protocol';
import { activityLabel, STRINGS } from './strings';

export interface SessionDetailsProps {
  session: SessionSummary;
  canOperate: boolean;
  canDecide: boolean;
  /** Pending approval requests of this session: decided right here, from the sprite's card. */
  approvals: ApprovalSummary[];
  onPause(): void;
  onResume(): void;
}

/** Beside the terminal: what the session is doing, what it changed, how its tests went. */
export default function SessionDetails({ session: s, canOperate, canDecide, approvals, onPause, onResume }: SessionDetailsProps) {
  const live = !(TERMINAL_STATES as string[]).includes(s.state);
  const added = s.diff?.reduce((n, f) => n + (f.added ?? 0), 0) ?? 0;
  const removed = s.diff?.reduce((n, f) => n + (f.removed ?? 0), 0) ?? 0;
  return (
    <aside className="session-details" aria-label={`Details of ${s.title}`}>
      <p className="details-status">
        <span className={`state-pill state-${s.state.toLowerCase()}`} data-testid="session-activity">
          {activityLabel(s)}
        </span>{' '}
        <span className="muted small">
          {s.provider}
          {s.mode === 'read_only' ? ' · read-only' : ''} · room /{s.room_path}
        </span>
      </p>
      <p className="small details-reason">{s.activity_detail && s.state === 'RUNNING' ? s.activity_detail : s.reason}</p>
      {s.runner_lost && (
        <p className="warn-line" role="status">
          {STRINGS.runnerLost}
        </p>
      )}
      {approvals.map((a) => (
        <ApprovalCard key={a.id} approval={a} canDecide={canDecide} />
      ))}
      {canOperate && live && (
        <div className="row">
          {s.state === 'PAUSED_BY_HUMAN' ? (
            <button type="button" className="btn btn-small" onClick={onResume}>
              {STRINGS.resumeSession}
            </button>
          ) : (
            <button type="button" className="btn btn-small" onClick={onPause} disabled={s.state !== 'RUNNING'}>
              {STRINGS.pauseSession}
            </button>
          )}
        </div>
      )}
      <h3 className="panel-title">{STRINGS.testsTitle}</h3>
      {s.tests ? (
        <p className="small" data-testid="session-tests">
          <code>{s.tests.command}</code>{' '}
          {s.tests.running ? (
            <span className="muted">running…</span>
          ) : (
            <>
              <span className="ok-text">{s.tests.passed} passed</span>, <span className={s.tests.failed ? 'bad-text' : 'muted'}>{s.tests.failed} failed</span>
            </>
          )}
        </p>
      ) : (
        <p className="muted small">{STRINGS.noTests}</p>
      )}
      <h3 className="panel-title">
        {STRINGS.changedFiles}
        {s.diff?.length ? (
          <span className="muted">
            {' '}
            {s.diff.length} · <span className="ok-text">+{added}</span> <span className="bad-text">−{removed}</span>
          </span>
        ) : null}
      </h3>
      {s.diff?.length ? (
        <ul className="diff-list" data-testid="session-diff">
          {s.diff.map((f) => (
            <li key={f.path}>
              <span className="diff-path">{f.path}</span>
              <span className="ok-text">{f.added === null ? 'bin' : `+${f.added}`}</span>
              <span className="bad-text">{f.removed === null ? '' : `−${f.removed}`}</span>
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted small">{STRINGS.noChanges}</p>
      )}
      <RedactionReceipt sessionId={s.id} state={s.state} live={live} />
    </aside>
  );
}
