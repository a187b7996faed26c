'use client';
import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { PlannerInfo, QuestUpdated, RepoSummary } from '../../protocol';
import { api } from '../ui/api';
import RepoSelect from '../ui/RepoSelect';
import { QUESTS_KEY, mergeQuest } from './use-quests';

/** Shortest goal the form sends (the server's schema says the same in words). */
const MIN_GOAL_CHARS = 3;

/** Goal + repository + planner → Plan. While the planner works the form says so; its refusal is shown in words. */
export default function NewQuestForm(props: { repos: RepoSummary[]; planners: PlannerInfo[] | undefined; onPlanned(id: string): void }) {
  const qc = useQueryClient();
  const [goal, setGoal] = useState('');
  const [repoId, setRepoId] = useState('');
  const [planner, setPlanner] = useState('rule');
  const [testCommand, setTestCommand] = useState('');
  const repo = repoId || props.repos[0]?.id || '';
  const create = useMutation({
    mutationFn: () => api<QuestUpdated>('/api/quests', { body: { repo_id: repo, goal, planner, ...(testCommand ? { test_command: testCommand } : {}) } }),
    onSuccess: (q) => {
      // The push usually came first; a planned quest only changes when someone runs it, so this never goes back in time.
      qc.setQueryData<QuestUpdated[]>(QUESTS_KEY, (list) => (list?.some((x) => x.id === q.id) ? list : mergeQuest(list, q)));
      props.onPlanned(q.id);
    },
  });
  const chosen = props.planners?.find((p) => p.id === planner);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!create.isPending) create.mutate();
  };
  const short = goal.trim().length < MIN_GOAL_CHARS;

  return (
    <form className="card quest-form" onSubmit={submit} aria-label="New quest" aria-busy={create.isPending}>
      <h2>New quest</h2>
      <RepoSelect repos={props.repos} value={repo} onChange={setRepoId} />
      <label className="block">
        Goal
        <textarea value={goal} onChange={(e) => setGoal(e.target.value)} rows={3} placeholder="Move every link from old.example.com to new.example.com" aria-describedby="quest-goal-help" />
      </label>
      <p id="quest-goal-help" className="muted small field-help">
        Links to move, a symbol to rename, broken doc links or a JSON schema become deterministic steps; anything else becomes an agent step and a test.
      </p>
      <label className="block">
        Planner
        <select value={planner} onChange={(e) => setPlanner(e.target.value)}>
          {(props.planners ?? []).map((p) => (
            <option key={p.id} value={p.id} disabled={!p.available}>
              {p.id} {p.version} — {p.determinism} determinism{p.available ? '' : ' (not installed)'}
            </option>
          ))}
        </select>
      </label>
      {chosen && (
        <p className="muted small field-help" data-testid="planner-cost">
          Cost: {Object.entries(chosen.cost_model).map(([k, v]) => `${k.replaceAll('_', ' ')} ${v}`).join(', ') || 'none'}
        </p>
      )}
      <label className="block">
        Test command (agent steps)
        <input value={testCommand} onChange={(e) => setTestCommand(e.target.value)} placeholder="npm test" />
      </label>
      {create.isPending && (
        <p className="quest-progress" role="status">
          <span className="quest-spinner" aria-hidden="true" /> Planning: the {planner} planner is working out the steps…
        </p>
      )}
      {create.isError && (
        <p className="error-line" role="alert">
          Could not plan that goal: {create.error.message}
        </p>
      )}
      <div className="row">
        <button type="submit" className="btn btn-primary" disabled={create.isPending || short || !repo}>
          {create.isPending ? 'Planning…' : 'Plan'}
        </button>
        {short && <span className="muted small">Write a goal of at least {MIN_GOAL_CHARS} characters.</span>}
      </div>
    </form>
  );
}
