'use client';
import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { DTA_PARAMS_SCHEMAS, DTA_SUMMARIES, DTA_TOOLS, type DtaRunSummary, type DtaTool, type RepoSummary } from '../../protocol';
import { api, ApiRequestError } from '../ui/api';
import RepoSelect from '../ui/RepoSelect';
import SchemaForm from './SchemaForm';
import { dtaTable, STATUS_WORDS } from './dta-view';
import { DTA_RUNS_KEY, useDtaRuns } from './use-dta-runs';
import { useSchemaForm } from './use-schema-form';


/**
 * Deterministic tool adapters beside the blueprints: a form from each adapter's params schema, a
 * dry-run that becomes an approval card, and each run's before/after table, verifier checks and patch.
 */
export default function DtaSection({ repos, canRun, canDecide }: { repos: RepoSummary[]; canRun: boolean; canDecide: boolean }) {
  const [tool, setTool] = useState<DtaTool>('link_updater');
  const [openId, setOpenId] = useState<string | null>(null);
  const runs = useDtaRuns();
  const open = runs.data?.find((r) => r.id === openId) ?? null;
  return (
    <div className="workshop-grid dta-grid">
      <div className="workshop-col">
        <section className="card" aria-labelledby="dta-title">
          <h2 id="dta-title">Deterministic tool adapters</h2>
          <ul className="agent-list" aria-label="Deterministic tool adapters">
            {DTA_TOOLS.map((t) => (
              <li key={t}>
                <button type="button" className={`agent-button${t === tool ? ' selected' : ''}`} aria-pressed={t === tool} onClick={() => setTool(t)}>
                  <span className="agent-name">{t}</span>
                  <span className="muted small">{DTA_SUMMARIES[t]}</span>
                </button>
              </li>
            ))}
          </ul>
        </section>
        <DtaForm key={tool} tool={tool} repos={repos.filter((r) => r.status === 'ready')} canRun={canRun} onStarted={(r) => setOpenId(r.id)} />
      </div>
      <section className="card runs-card" aria-labelledby="dta-runs-title">
        <h2 id="dta-runs-title">DTA runs</h2>
        {runs.isError && <p className="error-line">{runs.error.message}</p>}
        {(runs.data ?? []).length === 0 && !runs.isPending && <p className="muted">No DTA runs yet.</p>}
        <ul className="run-list" aria-label="DTA runs">
          {(runs.data ?? []).map((r) => (
            <li key={r.id}>
              <button type="button" className={`run-row${r.id === openId ? ' selected' : ''}`} onClick={() => setOpenId(r.id)} data-testid={`dta-run-${r.id}`}>
                <span className="agent-name">{r.tool}</span> <span className={`run-status status-${r.status}`}>{STATUS_WORDS[r.status]}</span>
                <span className="muted small"> {r.reason}</span>
              </button>
            </li>
          ))}
        </ul>
        {open && <DtaRunDetails run={open} canDecide={canDecide} />}
      </section>
    </div>
  );
}

function DtaForm({ tool, repos, canRun, onStarted }: { tool: DtaTool; repos: RepoSummary[]; canRun: boolean; onStarted(run: DtaRunSummary): void }) {
  const schema = DTA_PARAMS_SCHEMAS[tool] as unknown as Record<string, unknown>;
  const { fields, values, errors, formError, setFormError, onChange, check } = useSchemaForm(schema);
  const [repoId, setRepoId] = useState(repos[0]?.id ?? '');
  const [glob, setGlob] = useState('');
  const qc = useQueryClient();
  const start = useMutation({
    mutationFn: (params: Record<string, unknown>) => api<DtaRunSummary>('/api/dta-runs', { body: { repo_id: repoId || repos[0]?.id, invocation: { tool, params, ...(glob.trim() ? { glob: glob.trim() } : {}) } } }),
    onSuccess: (run) => {
      setFormError(null);
      qc.setQueryData<DtaRunSummary[]>(DTA_RUNS_KEY, (list) => [run, ...(list ?? [])]);
      onStarted(run);
    },
    onError: (e) => setFormError(e instanceof ApiRequestError ? e.message : String(e)),
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    const parameters = check('Fix the fields marked above.');
    if (parameters) start.mutate(parameters);
  }
  return (
    <section className="card run-form" aria-labelledby="dta-form-title">
      <h2 id="dta-form-title">{tool}</h2>
      <p>{DTA_SUMMARIES[tool]}</p>
      <form onSubmit={submit} noValidate aria-label={`Parameters of ${tool}`}>
        <RepoSelect repos={repos} value={repoId} onChange={setRepoId} disabled={!canRun} />
        <label className="block">
          Files (glob, optional)
          <input value={glob} onChange={(e) => setGlob(e.target.value)} placeholder="site/**/*.html" disabled={!canRun} />
        </label>
        <SchemaForm
          idPrefix={`dta-${tool}`}
          fields={fields}
          values={values}
          errors={errors}
          disabled={!canRun}
          onChange={onChange}
        />
        <div className="row">
          <button type="submit" className="btn btn-primary" disabled={!canRun || start.isPending || repos.length === 0}>
            {start.isPending ? 'Starting…' : 'Dry-run'}
          </button>
          <span className="muted small">The proposed patch waits for approval before anything is applied.</span>
        </div>
        {formError && (
          <p className="error-line" role="alert">
            {formError}
          </p>
        )}
      </form>
    </section>
  );
}

function DtaRunDetails({ run, canDecide }: { run: DtaRunSummary; canDecide: boolean }) {
  const qc = useQueryClient();
  const decide = useMutation({
    mutationFn: (decision: 'allow' | 'deny') => api(`/api/approvals/${run.approval_id}/decide`, { body: { decision } }),
    onSettled: () => qc.invalidateQueries({ queryKey: DTA_RUNS_KEY }),
  });
  const rows = dtaTable(run);
  const outputHref = run.output ? `data:application/json;charset=utf-8,${encodeURIComponent(JSON.stringify(run.output, null, 2))}` : null;
  return (
    <div className="run-details" aria-label={`DTA run ${run.id}`} data-testid="dta-run-details">
      <h3 className="panel-title">
        {run.tool} · <span data-testid="dta-status">{STATUS_WORDS[run.status]}</span>
      </h3>
      <p className="small" data-testid="dta-reason">
        {run.reason}
      </p>
      <p className="small muted">
        Branch <code>{run.branch}</code>
        {run.commit_sha && (
          <>
            {' '}
            · commit <code>{run.commit_sha.slice(0, 12)}</code>
          </>
        )}
        {run.passed && <> · downstream may proceed</>}
      </p>
      {rows.length > 0 && (
        <table className="dta-table" aria-label="Before and after">
          <thead>
            <tr>
              <th scope="col"></th>
              <th scope="col">before</th>
              <th scope="col">proposed</th>
              <th scope="col">applied</th>
              <th scope="col">after</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.name}>
                <th scope="row">{r.name}</th>
                <td>{r.before}</td>
                <td>{r.proposed}</td>
                <td>{r.applied}</td>
                <td>{r.after}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {run.output && (
        <div className="small" aria-label="Verifier">
          Verifier ({run.output.phase}): <strong data-testid="dta-verifier">{run.output.verifier.passed ? 'passed' : 'failed'}</strong> — {run.output.verifier.checks.join(', ')}
          {run.output.verifier.failures.map((f) => (
            <div key={f} className="error-line">
              {f}
            </div>
          ))}
        </div>
      )}
      {(run.events ?? []).length > 0 && (
        <ol className="small dta-events" aria-label="DTA events">
          {run.events!.map((e, i) => (
            <li key={`${e.type}-${i}`}>
              <code>{e.type}</code> <span className="muted">{new Date(e.ts).toLocaleTimeString()}</span> {e.detail}
            </li>
          ))}
        </ol>
      )}
      {run.status === 'waiting_for_approval' && run.approval_id && (
        <div className="row">
          <button type="button" className="btn btn-primary" disabled={!canDecide || decide.isPending} onClick={() => decide.mutate('allow')}>
            Allow apply
          </button>
          <button type="button" className="btn" disabled={!canDecide || decide.isPending} onClick={() => decide.mutate('deny')}>
            Deny
          </button>
          {!canDecide && <span className="muted small">An approver decides (Approvals).</span>}
          {decide.isError && <span className="error-line">{decide.error.message}</span>}
        </div>
      )}
      <p className="small">
        {run.patch !== null && (
          <a href={`/api/dta-runs/${run.id}/patch`} download>
            Download the patch
          </a>
        )}
        {outputHref && (
          <>
            {' · '}
            <a href={outputHref} download={`${run.id}.json`}>
              Download the output JSON
            </a>
          </>
        )}
      </p>
      {(run.artifacts ?? []).length > 0 && (
        <ul className="small dta-artifacts" aria-label="Artifacts">
          {run.artifacts!.map((p) => (
            <li key={p}>
              <a href={`/api/dta-runs/${run.id}/artifacts?path=${encodeURIComponent(p)}`} download>
                {p.slice(p.lastIndexOf('/') + 1)}
              </a>
            </li>
          ))}
        </ul>
      )}
      {run.patch && <pre className="dta-patch" aria-label="Patch">{run.patch}</pre>}
    </div>
  );
}
