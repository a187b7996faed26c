'use client';
import { useEffect, useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import type { QuestUpdated } from '../../protocol';
import { api } from '../ui/api';
import PlanGraph from './PlanGraph';
import StepCard from './StepCard';
import { STATE_WORDS, progressLine, questProgress } from './progress';

/** What a failed action was, in words, before the server's reason. */
const ACTION_WORDS = { run: 'Could not run the quest', decide: 'Could not record the decision', replay: 'Could not start the replay' } as const;
type Action = { kind: keyof typeof ACTION_WORDS; path: string; body?: unknown; step?: string };

/**
 * One quest: its state and progress, Run, the plan as a DAG picture, then each step's card.
 * Actions change nothing here directly: the server pushes the quest as it changes (quest:updated),
 * so a slow answer can never paint an older state over a newer push.
 */
export default function QuestDetail({ quest: q, canRun, canDecide }: { quest: QuestUpdated; canRun: boolean; canDecide: boolean }) {
  const act = useMutation({ mutationFn: (a: Action) => api<QuestUpdated>(a.path, { method: 'POST', body: a.body ?? {} }) });
  // The step whose replay was asked for, until its answer arrives (pushed): the server first clears
  // the old answer (`cleared`), then a new one comes.
  const [replaying, setReplaying] = useState<{ step: string; cleared: boolean } | null>(null);
  const replayOf = replaying ? q.steps.find((s) => s.step_id === replaying.step)?.replay : undefined;
  useEffect(() => {
    if (!replaying) return;
    if (act.isError) setReplaying(null);
    else if (replayOf === null && !replaying.cleared) setReplaying({ ...replaying, cleared: true });
    else if (replayOf && replaying.cleared) setReplaying(null);
  }, [replaying, replayOf, act.isError]);
  const p = questProgress(q);
  const live = q.state === 'running' || q.state === 'waiting_for_approval';

  return (
    <section className="workshop-col" aria-label="Quest">
      <div className="card quest-head">
        <h2>{q.goal}</h2>
        <p className="quest-status-line">
          <span className={`quest-badge quest-state-${q.state}`} data-testid="quest-state">
            {STATE_WORDS[q.state]}
          </span>{' '}
          <span data-testid="quest-progress">{progressLine(q)}</span>
        </p>
        <div className="quest-meter" role="progressbar" aria-label="Steps finished" aria-valuemin={0} aria-valuemax={p.total} aria-valuenow={p.finished} aria-valuetext={`${p.finished} of ${p.total} steps finished`}>
          <span className={`quest-meter-fill${live ? ' is-live' : ''}${p.failed.length ? ' has-failed' : ''}`} style={{ width: `${p.total ? (100 * p.finished) / p.total : 0}%` }} />
        </div>
        <p className={`small${q.state === 'failed' ? ' error-line' : ''}`} data-testid="quest-reason">
          {q.reason}
        </p>
        <dl className="run-facts small quest-facts">
          <dt>planner</dt>
          <dd>
            {q.plan.metadata.planner} {q.plan.metadata.planner_version}
          </dd>
          <dt>plan_input_hash</dt>
          <dd>
            <code data-testid="plan-input-hash">{q.plan_input_hash}</code>
          </dd>
          <dt>branch</dt>
          <dd>
            <code>{q.branch}</code>
          </dd>
        </dl>
        {q.state === 'planned' && canRun && (
          <div className="row">
            <button type="button" className="btn btn-primary" disabled={act.isPending} onClick={() => act.mutate({ kind: 'run', path: `/api/quests/${q.id}/run` })}>
              {act.isPending && act.variables?.kind === 'run' ? 'Starting…' : 'Run'}
            </button>
          </div>
        )}
        {act.isError && (
          <p className="error-line" role="alert">
            {ACTION_WORDS[act.variables?.kind ?? 'run']}: {act.error.message}
          </p>
        )}
      </div>
      <PlanGraph steps={q.plan.steps} states={q.steps} />
      <ol className="plain-list quest-steps" aria-label="Steps">
        {q.plan.steps.map((step) => {
          const s = q.steps.find((x) => x.step_id === step.step_id)!;
          const gateOf = step.skill === 'gate' ? q.steps.find((x) => x.step_id === String(step.params.of)) : undefined;
          return (
            <StepCard
              key={step.step_id}
              questId={q.id}
              step={step}
              summary={s}
              gateProposal={gateOf?.proposal ?? null}
              canRun={canRun}
              canDecide={canDecide}
              busy={act.isPending}
              replaying={replaying?.step === step.step_id}
              onReplay={() => {
                setReplaying({ step: step.step_id, cleared: false });
                act.mutate({ kind: 'replay', path: `/api/quests/${q.id}/steps/${step.step_id}/replay`, step: step.step_id });
              }}
              onDecide={(decision) => act.mutate({ kind: 'decide', path: `/api/quests/${q.id}/steps/${step.step_id}/decide`, body: { decision }, step: step.step_id })}
            />
          );
        })}
      </ol>
    </section>
  );
}
