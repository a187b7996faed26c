'use client';
import { useEffect, useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ROLE_RANK, type QuestSummary } from '../../protocol';
import { api } from '../ui/api';
import Header from '../ui/Header';
import { useRequireLogin } from '../ui/use-auth-redirect';
import { useWorld } from '../ui/use-world';
import PlanGraph from './PlanGraph';
import StepCard from './StepCard';
import { useQuests } from './use-quests';

/** The quest board: goal + repository + planner → the plan as a DAG → Run → live steps, gate, receipts, replay. */
export default function QuestsScreen() {
  const me = useRequireLogin();
  const world = useWorld(me.isSuccess);
  const [replaying, setReplaying] = useState<{ quest: string; step: string } | null>(null);
  const { planners, quests } = useQuests(me.isSuccess, replaying !== null);
  const qc = useQueryClient();
  const [goal, setGoal] = useState('');
  const [repoId, setRepoId] = useState('');
  const [planner, setPlanner] = useState('rule');
  const [testCommand, setTestCommand] = useState('');
  const [openId, setOpenId] = useState<string | null>(null);
  // A link such as a notification's (/quests?quest=<id>) opens that quest.
  useEffect(() => {
    const wanted = new URLSearchParams(window.location.search).get('quest');
    if (wanted) setOpenId(wanted);
  }, []);

  const refresh = (q: QuestSummary) => {
    qc.setQueryData<QuestSummary[]>(['quests'], (all) => [q, ...(all ?? []).filter((x) => x.id !== q.id)]);
    setOpenId(q.id);
  };
  const create = useMutation({
    mutationFn: () => api<QuestSummary>('/api/quests', { body: { repo_id: repoId || world.data?.repos[0]?.id, goal, planner, ...(testCommand ? { test_command: testCommand } : {}) } }),
    onSuccess: refresh,
  });
  const act = useMutation({ mutationFn: (a: { path: string; body?: unknown }) => api<QuestSummary>(a.path, { method: 'POST', body: a.body ?? {} }), onSuccess: refresh });

  const list = quests.data ?? [];
  const awaitedReplay = replaying ? list.find((q) => q.id === replaying.quest)?.steps.find((s) => s.step_id === replaying.step)?.replay : undefined;
  // The replay's answer arrived: stop asking every second.
  useEffect(() => {
    if (awaitedReplay) setReplaying(null);
  }, [awaitedReplay]);

  if (!me.data || !world.data) return <main className="center-note">Opening the quest board…</main>;
  const canRun = ROLE_RANK[me.data.role] >= ROLE_RANK.operator;
  const canDecide = ROLE_RANK[me.data.role] >= ROLE_RANK.approver;
  const open = list.find((q) => q.id === openId) ?? list[0] ?? null;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };

  return (
    <div className="app-shell">
      <Header me={me.data} runners={world.data.runners} />
      <main className="workshop quests">
        <div className="workshop-head">
          <h1>Quests</h1>
          <p className="muted">A goal becomes a plan of steps; each runs as an atomic work item with a receipt anyone can replay.</p>
        </div>
        <div className="workshop-grid">
          <div className="workshop-col">
            {canRun && (
              <form className="card" onSubmit={submit} aria-label="New quest">
                <h2>New quest</h2>
                <label>
                  Repository
                  <select value={repoId || world.data.repos[0]?.id || ''} onChange={(e) => setRepoId(e.target.value)}>
                    {world.data.repos.map((r) => (
                      <option key={r.id} value={r.id}>
                        {r.name}
                      </option>
                    ))}
                  </select>
                </label>
                <label>
                  Goal
                  <textarea value={goal} onChange={(e) => setGoal(e.target.value)} rows={3} placeholder="Move every link from old.example.com to new.example.com" />
                </label>
                <label>
                  Planner
                  <select value={planner} onChange={(e) => setPlanner(e.target.value)}>
                    {(planners.data ?? []).map((p) => (
                      <option key={p.id} value={p.id} disabled={!p.available}>
                        {p.id} {p.version} — {p.determinism} determinism, {Object.entries(p.cost_model).map(([k, v]) => `${k} ${v}`).join(', ')}
                      </option>
                    ))}
                  </select>
                </label>
                <label>
                  Test command (agent steps)
                  <input value={testCommand} onChange={(e) => setTestCommand(e.target.value)} placeholder="npm test" />
                </label>
                {create.isError && <p className="error-line">{create.error.message}</p>}
                <button type="submit" className="btn btn-primary" disabled={create.isPending || goal.trim().length < 3}>
                  Plan
                </button>
              </form>
            )}
            <section className="card" aria-labelledby="quest-list-title">
              <h2 id="quest-list-title">Quests</h2>
              <ul className="plain-list">
                {list.map((q) => (
                  <li key={q.id}>
                    <button type="button" className={`agent-button${open?.id === q.id ? ' selected' : ''}`} onClick={() => setOpenId(q.id)}>
                      <span className="agent-name">{q.goal}</span> <span className="muted small">{q.state.replaceAll('_', ' ')}</span>
                    </button>
                  </li>
                ))}
              </ul>
            </section>
          </div>
          {open && (
            <section className="workshop-col" aria-label="Quest">
              <div className="card">
                <h2>{open.goal}</h2>
                <p className="small">
                  <span data-testid="quest-state">{open.state.replaceAll('_', ' ')}</span> — {open.reason}
                </p>
                <p className="muted small">
                  planner {open.plan.metadata.planner} {open.plan.metadata.planner_version}, plan_input_hash <code data-testid="plan-input-hash">{open.plan_input_hash}</code>, branch <code>{open.branch}</code>
                </p>
                {open.state === 'planned' && canRun && (
                  <button type="button" className="btn btn-primary" disabled={act.isPending} onClick={() => act.mutate({ path: `/api/quests/${open.id}/run` })}>
                    Run
                  </button>
                )}
                {act.isError && <p className="error-line">{act.error.message}</p>}
              </div>
              <PlanGraph steps={open.plan.steps} states={open.steps} />
              <ol className="plain-list">
                {open.plan.steps.map((step) => {
                  const s = open.steps.find((x) => x.step_id === step.step_id)!;
                  const gateOf = step.skill === 'gate' ? open.steps.find((x) => x.step_id === String(step.params.of)) : undefined;
                  return (
                    <StepCard
                      key={step.step_id}
                      questId={open.id}
                      step={step}
                      summary={s}
                      gateProposal={gateOf?.proposal ?? null}
                      canRun={canRun}
                      canDecide={canDecide}
                      busy={act.isPending}
                      onReplay={() => {
                        setReplaying({ quest: open.id, step: step.step_id });
                        act.mutate({ path: `/api/quests/${open.id}/steps/${step.step_id}/replay` });
                      }}
                      onDecide={(decision) => act.mutate({ path: `/api/quests/${open.id}/steps/${step.step_id}/decide`, body: { decision } })}
                    />
                  );
                })}
              </ol>
            </section>
          )}
        </div>
      </main>
    </div>
  );
}
