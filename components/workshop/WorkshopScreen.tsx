'use client';
import { useEffect, useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import type { DeterministicAgent, RunSummary } from '../../protocol';
import { api, ApiRequestError } from '../ui/api';
import Header from '../ui/Header';
import { STRINGS } from '../ui/strings';
import { useRequireLogin } from '../ui/use-auth-redirect';
import { useWorld } from '../ui/use-world';
import DtaSection from './DtaSection';
import SchemaForm from './SchemaForm';
import { useWorkshop } from './use-workshop';
import { useSchemaForm } from './use-schema-form';
import { useRole } from '../ui/use-role';

const agentKey = (a: Pick<DeterministicAgent, 'name' | 'runner_id'>) => `${a.runner_id}/${a.name}`;

/** The workshop: deterministic agents with a form per parameters schema, and their runs. */
export default function WorkshopScreen() {
  const me = useRequireLogin();
  const world = useWorld(me.isSuccess);
  const { agents, runs } = useWorkshop(me.isSuccess);
  const [selectedKey, setSelectedKey] = useState<string | null>(null);
  const [openRunId, setOpenRunId] = useState<string | null>(null);

  // /workshop?run=<id> (from a worker sprite in the village) opens that run.
  useEffect(() => {
    const id = new URLSearchParams(window.location.search).get('run');
    if (id) setOpenRunId(id);
  }, []);

  const list = agents.data?.agents ?? [];
  const selected = list.find((a) => agentKey(a) === selectedKey) ?? list[0] ?? null;
  const { atLeast } = useRole();
  const canRun = atLeast('operator');

  if (!me.data || !world.data) return <main className="center-note">Opening the workshop…</main>;
  const openRun = runs.data?.find((r) => r.id === openRunId) ?? null;

  return (
    <div className="app-shell">
      <Header me={me.data} runners={world.data.runners} />
      <main className="workshop">
        <div className="workshop-head">
          <h1>{STRINGS.workshopTitle}</h1>
          <p className="muted">{STRINGS.workshopIntro}</p>
        </div>
        <div className="workshop-grid">
          <div className="workshop-col">
            <section className="card" aria-labelledby="agents-title">
              <h2 id="agents-title">Deterministic agents</h2>
              {agents.isError && <p className="error-line">{agents.error.message}</p>}
              {list.length === 0 && !agents.isPending && <p className="muted">{STRINGS.noAgents}</p>}
              <ul className="agent-list" aria-label="Deterministic agents">
                {list.map((a) => (
                  <li key={agentKey(a)}>
                    <button
                      type="button"
                      className={`agent-button${selected && agentKey(a) === agentKey(selected) ? ' selected' : ''}`}
                      aria-pressed={selected ? agentKey(a) === agentKey(selected) : false}
                      onClick={() => setSelectedKey(agentKey(a))}
                    >
                      <span className="agent-name">{a.name}</span>
                      <span className="muted small">
                        on {a.runner_name}
                        {a.runner_online ? '' : ' (offline)'}
                      </span>
                    </button>
                  </li>
                ))}
              </ul>
              {(agents.data?.problems.length ?? 0) > 0 && (
                <div className="blueprint-problems">
                  <h3 className="panel-title">Skipped blueprint files</h3>
                  <ul className="plain-list">
                    {agents.data!.problems.map((p) => (
                      <li key={`${p.runner_id}/${p.file}`} className="small">
                        <code>{p.file}</code> on {p.runner_name}: <span className="warn-line">{p.reason}</span>
                      </li>
                    ))}
                  </ul>
                </div>
              )}
            </section>
            {selected ? (
              <RunForm
                key={agentKey(selected)}
                agent={selected}
                canRun={canRun}
                sameName={list.filter((a) => a.name === selected.name).length > 1}
                sessions={world.data.sessions.filter((s) => s.state !== 'COMPLETED' && s.state !== 'FAILED')}
                onStarted={(run) => setOpenRunId(run.id)}
              />
            ) : (
              <section className="card" aria-label="Run an agent">
                <p className="muted">Pick an agent to run.</p>
              </section>
            )}
          </div>
          <RunsSection runs={runs.data ?? []} loading={runs.isPending} openRun={openRun} onOpen={setOpenRunId} />
        </div>
        <DtaSection repos={world.data.repos} canRun={canRun} canDecide={atLeast('approver')} />
      </main>
    </div>
  );
}

function RunForm({
  agent,
  canRun,
  sameName,
  sessions,
  onStarted,
}: {
  agent: DeterministicAgent;
  canRun: boolean;
  sameName: boolean;
  sessions: Array<{ id: string; title: string }>;
  onStarted(run: RunSummary): void;
}) {
  const { fields, values, errors, setErrors, formError, setFormError, onChange, check } = useSchemaForm(agent.parameters_schema);
  const [parent, setParent] = useState('');

  const start = useMutation({
    mutationFn: (parameters: Record<string, unknown>) =>
      api<RunSummary>('/api/runs', {
        body: { agent_name: agent.name, parameters, ...(sameName ? { runner_id: agent.runner_id } : {}), ...(parent ? { parent_session_id: parent } : {}) },
      }),
    onSuccess: (run) => {
      setFormError(null);
      onStarted(run);
    },
    onError: (e) => {
      if (e instanceof ApiRequestError) {
        setFormError(e.message);
        const issues = e.issues ?? [];
        if (issues.length) setErrors(Object.fromEntries(issues.map((i) => [i.path.split('.')[0] ?? '', i.message])));
      } else setFormError(String(e));
    },
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    const parameters = check(STRINGS.fixErrors);
    if (parameters) start.mutate(parameters);
  }

  return (
    <section className="card run-form" aria-labelledby="run-form-title">
      <h2 id="run-form-title">
        {agent.name} <span className="muted small">on {agent.runner_name}</span>
      </h2>
      {agent.description && <p>{agent.description}</p>}
      <p className="small">
        Command: <code>{agent.command}</code> <span className="muted">· stops after {agent.timeout_seconds} s</span>
      </p>
      <form onSubmit={submit} noValidate aria-label={`Parameters of ${agent.name}`}>
        <SchemaForm
          idPrefix={`p-${agent.name}`}
          fields={fields}
          values={values}
          errors={errors}
          disabled={!canRun}
          onChange={onChange}
        />
        <label className="block parent-select">
          Send the result to session
          <select value={parent} onChange={(e) => setParent(e.target.value)} disabled={!canRun}>
            <option value="">(none)</option>
            {sessions.map((s) => (
              <option key={s.id} value={s.id}>
                {s.title}
              </option>
            ))}
          </select>
        </label>
        <div className="row">
          <button type="submit" className="btn btn-primary" disabled={!canRun || start.isPending || !agent.runner_online}>
            {start.isPending ? 'Starting…' : STRINGS.runButton}
          </button>
          {!canRun && <span className="muted small">{STRINGS.viewersCannotRun}</span>}
        </div>
        {formError && (
          <p className="error-line" role="alert" data-testid="run-form-error">
            {formError}
          </p>
        )}
      </form>
    </section>
  );
}

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' }) : '—');

function RunsSection({ runs, loading, openRun, onOpen }: { runs: RunSummary[]; loading: boolean; openRun: RunSummary | null; onOpen(id: string): void }) {
  return (
    <section className="card runs-card" aria-labelledby="runs-title">
      <h2 id="runs-title">{STRINGS.runsTitle}</h2>
      {openRun && <RunDetails run={openRun} />}
      {runs.length === 0 ? (
        <p className="muted">{loading ? 'Loading…' : STRINGS.noRuns}</p>
      ) : (
        <table className="pixel-table runs-table">
          <thead>
            <tr>
              <th>Agent</th>
              <th>Status</th>
              <th>Exit</th>
              <th>Runner</th>
              <th>By</th>
              <th>Started</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.id} data-run-id={r.id} className={openRun?.id === r.id ? 'selected' : undefined}>
                <td className="nowrap">{r.agent_name}</td>
                <td>
                  <span className={`state-pill run-${r.status}`}>{r.status}</span>
                </td>
                <td>{r.exit_code ?? '—'}</td>
                <td>{r.runner_name}</td>
                <td>{r.created_by}</td>
                <td className="nowrap">{when(r.started_at ?? r.created_at)}</td>
                <td>
                  <button type="button" className="btn btn-small" onClick={() => onOpen(r.id)} aria-label={`Show run ${r.id} of ${r.agent_name}`}>
                    Show
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function RunDetails({ run }: { run: RunSummary }) {
  const isJson = run.result_data !== null && run.result_data !== undefined;
  return (
    <article className="run-details" aria-label={`Run ${run.id}`} data-run-id={run.id} data-status={run.status}>
      <h3>
        {run.agent_name} <span className={`state-pill run-${run.status}`}>{run.status}</span>
      </h3>
      <dl className="run-facts">
        <dt>Run</dt>
        <dd>
          <code>{run.id}</code> on {run.runner_name}
        </dd>
        <dt>Why</dt>
        <dd>{run.reason || '—'}</dd>
        <dt>Exit code</dt>
        <dd data-testid="run-exit-code">{run.exit_code ?? (run.status === 'running' || run.status === 'queued' ? 'still running' : 'none')}</dd>
        <dt>Parameters</dt>
        <dd>
          <code>{JSON.stringify(run.parameters)}</code>
        </dd>
        {run.parent_session_id && (
          <>
            <dt>Result to</dt>
            <dd>
              session <code>{run.parent_session_id}</code> — {run.callback.state}
              {run.callback.detail ? `: ${run.callback.detail}` : ''}
            </dd>
          </>
        )}
      </dl>
      {run.result_text !== null && (
        <>
          <h4>Parsed result</h4>
          {isJson ? (
            <pre className="run-output" data-testid="run-result-data">
              {JSON.stringify(run.result_data, null, 2)}
            </pre>
          ) : (
            <p className="muted small" data-testid="run-result-data">
              {run.stdout_truncated ? 'stdout was cut at the output cap, so it is not parsed.' : 'stdout is not JSON.'}
            </p>
          )}
          <h4>stdout{run.stdout_truncated ? ' (cut at the output cap)' : ''}</h4>
          <pre className="run-output" data-testid="run-stdout">
            {run.result_text || '(empty)'}
          </pre>
        </>
      )}
      {run.stderr && (
        <>
          <h4>stderr</h4>
          <pre className="run-output run-stderr">{run.stderr}</pre>
        </>
      )}
    </article>
  );
}
