'use client';
import type { PlanStep, QuestStepSummary } from '../../protocol';

/** One step: why it was chosen, its constraints, state, RunResult, receipt hashes, replay and the gate's card. */
export default function StepCard(props: {
  questId: string;
  step: PlanStep;
  summary: QuestStepSummary;
  gateProposal: QuestStepSummary['proposal'];
  canRun: boolean;
  canDecide: boolean;
  onReplay: () => void;
  onDecide: (decision: 'allow' | 'deny') => void;
  busy: boolean;
}) {
  const { step, summary: s } = props;
  const r = s.result;
  return (
    <li className={`card quest-step quest-state-${s.state}`} aria-label={`Step ${step.step_id}`}>
      <h3>
        {step.step_id} <code>{step.skill}</code> <span className="badge" data-testid={`step-state-${step.step_id}`}>{s.state.replaceAll('_', ' ')}</span>
      </h3>
      <p className="small">{step.reason}</p>
      {step.constraints && (
        <p className="muted small">
          max files {step.constraints.max_files ?? '—'}, max tool ops {step.constraints.max_tool_ops ?? '—'}, max delta {step.constraints.max_delta_size ?? '—'} lines
          {step.test_command ? `, tests: ${step.test_command}` : ''}
        </p>
      )}
      {s.reason && s.reason !== step.reason && <p className="small" data-testid={`step-reason-${step.step_id}`}>{s.reason}</p>}
      {s.state === 'waiting_for_approval' && (
        <div className="card approval-inline" role="group" aria-label="Gate approval">
          <p className="small">
            Approve the patch of <code>{String(step.params.of)}</code>: {props.gateProposal ? `${props.gateProposal.files.length} files, sha256 ${props.gateProposal.patch_sha256?.slice(0, 16)}` : 'no proposal recorded'}
          </p>
          {props.gateProposal?.patch && <pre className="diff small">{props.gateProposal.patch.slice(0, 4000)}</pre>}
          {props.canDecide ? (
            <div className="row">
              <button type="button" className="btn btn-primary" disabled={props.busy} onClick={() => props.onDecide('allow')}>
                Allow
              </button>
              <button type="button" className="btn" disabled={props.busy} onClick={() => props.onDecide('deny')}>
                Deny
              </button>
            </div>
          ) : (
            <p className="muted small">An approver decides this gate.</p>
          )}
        </div>
      )}
      {r && (
        <dl className="small result-grid" aria-label={`RunResult of ${step.step_id}`}>
          <dt>status</dt>
          <dd data-testid={`result-status-${step.step_id}`}>{r.status}</dd>
          <dt>time</dt>
          <dd>{Math.round(r.metrics.execution_time_ms)} ms</dd>
          <dt>files / tool ops / lines</dt>
          <dd>
            {r.metrics.files_touched} / {r.metrics.tool_ops_count} / {r.metrics.delta_size}
          </dd>
          {r.denial_reason && (
            <>
              <dt>denied</dt>
              <dd>{r.denial_reason}</dd>
            </>
          )}
          {r.error && (
            <>
              <dt>error</dt>
              <dd>{r.error}</dd>
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
          <pre className="small">{r.test_output.slice(-4000)}</pre>
        </details>
      )}
      {s.receipt && (
        <div className="small">
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
              <button type="button" className="btn btn-small" disabled={props.busy} onClick={props.onReplay}>
                Replay
              </button>
            )}
            {s.replay && (
              <span className={s.replay.verified ? 'ok-line' : 'error-line'} data-testid={`replay-${step.step_id}`}>
                {s.replay.verified ? 'verified' : 'mismatch'}: {s.replay.detail}
              </span>
            )}
          </div>
        </div>
      )}
    </li>
  );
}
