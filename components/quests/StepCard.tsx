'use client';
import { QUEST_EVENT_PATCH_PREVIEW_CHARS, type PlanStep, type QuestStepView } from '../../protocol';
import { STATE_WORDS } from './progress';

/** One step: why it was chosen, its constraints, state, RunResult, receipt hashes, replay and the gate's card. */
export default function StepCard(props: {
  questId: string;
  step: PlanStep;
  summary: QuestStepView;
  gateProposal: QuestStepView['proposal'];
  canRun: boolean;
  canDecide: boolean;
  onReplay: () => void;
  onDecide: (decision: 'allow' | 'deny') => void;
  busy: boolean;
  /** A replay was asked for and its answer has not come yet. */
  replaying: boolean;
}) {
  const { step, summary: s } = props;
  const r = s.result;
  const bad = s.state === 'failed' || s.state === 'denied' || s.state === 'blocked';
  return (
    <li className={`card quest-step quest-state-${s.state}`} aria-label={`Step ${step.step_id}`}>
      <h3>
        {step.step_id} <code>{step.skill}</code>{' '}
        <span className={`quest-badge quest-state-${s.state}`} data-testid={`step-state-${step.step_id}`}>
          {STATE_WORDS[s.state]}
        </span>
      </h3>
      <p className="small">{step.reason}</p>
      {step.constraints && (
        <p className="muted small">
          max files {step.constraints.max_files ?? '—'}, max tool ops {step.constraints.max_tool_ops ?? '—'}, max delta {step.constraints.max_delta_size ?? '—'} lines
          {step.test_command ? `, tests: ${step.test_command}` : ''}
        </p>
      )}
      {s.state === 'running' && (
        <p className="quest-progress small" role="status">
          <span className="quest-spinner" aria-hidden="true" /> Working on the runner{s.attempts > 1 ? ` (attempt ${s.attempts})` : ''}…
        </p>
      )}
      {s.reason && s.reason !== step.reason && (
        <p className={`small${bad ? ' error-line' : ''}`} data-testid={`step-reason-${step.step_id}`}>
          {s.reason}
        </p>
      )}
      {s.state === 'waiting_for_approval' && (
        <div className="approval-inline" role="group" aria-label="Gate approval">
          <p className="small">
            Approve the patch of <code>{String(step.params.of)}</code>: {props.gateProposal ? `${props.gateProposal.files.length} files, sha256 ${props.gateProposal.patch_sha256?.slice(0, 16)}` : 'no proposal recorded'}
          </p>
          {props.gateProposal?.patch && (
            <pre className="run-output quest-diff small" tabIndex={0} aria-label="Proposed patch">
              {props.gateProposal.patch.slice(0, QUEST_EVENT_PATCH_PREVIEW_CHARS)}
              {props.gateProposal.patch_truncated || props.gateProposal.patch.length > QUEST_EVENT_PATCH_PREVIEW_CHARS ? '\n… (the whole patch is in the receipt once applied)' : ''}
            </pre>
          )}
          {props.canDecide ? (
            <div className="row">
              <button type="button" className="btn btn-primary" disabled={props.busy} onClick={() => props.onDecide('allow')}>
                Allow
              </button>
              <button type="button" className="btn btn-danger" disabled={props.busy} onClick={() => props.onDecide('deny')}>
                Deny
              </button>
            </div>
          ) : (
            <p className="muted small">An approver decides this gate.</p>
          )}
        </div>
      )}
      {r && (
        <dl className="small run-facts" aria-label={`RunResult of ${step.step_id}`}>
          <dt>status</dt>
          <dd data-testid={`result-status-${step.step_id}`} className={r.status === 'success' ? 'ok-text' : 'bad-text'}>
            {r.status}
          </dd>
          <dt>time</dt>
          <dd>{Math.round(r.metrics.execution_time_ms)} ms</dd>
          <dt>files / tool ops / lines</dt>
          <dd>
            {r.metrics.files_touched} / {r.metrics.tool_ops_count} / {r.metrics.delta_size}
          </dd>
          {r.denial_reason && (
            <>
              <dt>denied</dt>
              <dd className="bad-text">{r.denial_reason}</dd>
            </>
          )}
          {r.error && (
            <>
              <dt>error</dt>
              <dd className="bad-text">{r.error}</dd>
            </>
          )}
          {r.status === 'success' && (
            <>
              <dt>output hash</dt>
              <dd>
                <code data-testid={`output-hash-${step.step_id}`}>{r.output_hash}</code>
              </dd>
            </>
          )}
        </dl>
      )}
      {r?.test_output && (
        <details>
          <summary className="small">Test output</summary>
          <pre className="run-output small">{r.test_output.slice(-4000)}</pre>
        </details>
      )}
      {s.receipt && (
        <div className="small quest-receipt">
          <p>
            Receipt <code>{s.receipt.receipt_id}</code> ({s.receipt.replay === 'rerun' ? 'replay re-runs the step' : 'replay re-applies the patch'}): before <code>{s.receipt.before_hash.slice(0, 16)}</code> → after <code>{s.receipt.after_hash.slice(0, 16)}</code>
          </p>
          {Object.keys(s.receipt.artifact_hashes).length > 0 && (
            <ul className="plain-list">
              {Object.entries(s.receipt.artifact_hashes)
                .slice(0, 20)
                .map(([f, h]) => (
                  <li key={f}>
                    <code>{f}</code> <code className="muted">{h.slice(0, 16)}</code>
                  </li>
                ))}
            </ul>
          )}
          <div className="row">
            <a className="btn btn-small" href={`/api/quests/${props.questId}/steps/${step.step_id}/receipt`} download>
              Download RECEIPT.json
            </a>
            {props.canRun && (
              <button type="button" className="btn btn-small" disabled={props.busy || props.replaying} onClick={props.onReplay}>
                {props.replaying ? 'Replaying…' : 'Replay'}
              </button>
            )}
            {props.replaying && (
              <span className="quest-progress" role="status">
                <span className="quest-spinner" aria-hidden="true" /> Replaying the receipt on the runner…
              </span>
            )}
            {s.replay && !props.replaying && (
              <span className={s.replay.verified ? 'ok-text' : 'bad-text'} data-testid={`replay-${step.step_id}`}>
                {s.replay.verified ? 'verified' : 'mismatch'}: {s.replay.detail}
              </span>
            )}
          </div>
        </div>
      )}
    </li>
  );
}
