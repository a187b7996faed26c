'use client';
import dynamic from 'next/dynamic';
import { useState, type ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { UsageReport } from '../../protocol';
import { api } from '../ui/api';
import Header from '../ui/Header';
import { STRINGS } from '../ui/strings';
import { useRequireLogin } from '../ui/use-auth-redirect';

// Charts measure the page: they render in the browser only.
const AgentMinutesChart = dynamic(() => import('./charts').then((m) => m.AgentMinutesChart), { ssr: false });
const ConcurrencyChart = dynamic(() => import('./charts').then((m) => m.ConcurrencyChart), { ssr: false });
const PatrolChart = dynamic(() => import('./charts').then((m) => m.PatrolChart), { ssr: false });

const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 2 });

function Figure({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div className="figure" data-testid={testId}>
      <span className="figure-value">{value}</span>
      <span className="figure-label">{label}</span>
    </div>
  );
}

/** A chart with its numbers one click away (for keyboards, screen readers and copying). */
function ChartCard({ title, testId, chart, table }: { title: string; testId: string; chart: ReactNode; table: ReactNode }) {
  return (
    <section className="card chart-card" aria-label={title} data-testid={testId}>
      <h2>{title}</h2>
      {chart}
      <details>
        <summary>Show as a table</summary>
        {table}
      </details>
    </section>
  );
}

/** The usage page (admins): agent-minutes, concurrency, patrol minutes and invocations of one billing period. */
/** A titled table of figures; `title` on a row is shown on hover of its first cell. */
function FigureTable(props: { title: string; testId: string; columns: string[]; rows: Array<{ key: string; title?: string; cells: Array<string | number> }> }) {
  return (
    <section className="card" aria-label={props.title}>
      <h2>{props.title}</h2>
      <table className="pixel-table" data-testid={props.testId}>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr key={row.key}>
              {row.cells.map((c, i) => (
                <td key={i} title={i === 0 ? row.title : undefined}>
                  {c}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export default function UsageScreen() {
  const me = useRequireLogin();
  const isAdmin = me.data?.role === 'admin';
  const [period, setPeriod] = useState('');
  const report = useQuery({
    queryKey: ['usage', period],
    queryFn: () => api<UsageReport>(`/api/usage${period ? `?period=${period}` : ''}`),
    enabled: isAdmin,
  });

  if (!me.data) return <main className="center-note">Loading…</main>;
  const r = report.data;
  const empty = r && r.totals.agent_minutes === 0 && r.totals.patrol_minutes === 0;

  return (
    <div className="app-shell">
      <Header me={me.data} />
      <main className="settings usage">
        <h1>{STRINGS.usageTitle}</h1>
        {!isAdmin ? (
          <p className="card admins-only" role="alert">
            {STRINGS.adminsOnly}
          </p>
        ) : (
          <>
            <form className="inline-form card" aria-label="Usage period" onSubmit={(e) => e.preventDefault()}>
              <label>
                {STRINGS.usagePeriod}
                <select name="period" value={r?.period ?? period} onChange={(e) => setPeriod(e.target.value)} disabled={!r}>
                  {(r?.periods ?? []).map((p) => (
                    <option key={p} value={p}>
                      {p}
                    </option>
                  ))}
                </select>
              </label>
              {r && (
                <a className="btn" href={`/api/usage.csv?period=${r.period}`} download>
                  {STRINGS.usageExport}
                </a>
              )}
              <span className="muted small">{STRINGS.usageFromTicks}</span>
            </form>
            {report.error && (
              <p className="error-line" role="alert">
                {report.error.message}
              </p>
            )}
            {!r && !report.error && <p className="muted">Reading the usage ticks…</p>}
            {r && (
              <>
                <div className="figures" aria-label="Totals">
                  <Figure testId="total-agent-minutes" label="agent-minutes" value={fmt(r.totals.agent_minutes)} />
                  <Figure testId="total-patrol-minutes" label="patrol minutes" value={fmt(r.totals.patrol_minutes)} />
                  <Figure testId="total-invocations" label="provider invocations" value={fmt(r.totals.provider_invocations)} />
                  <Figure testId="peak-concurrency" label="peak concurrency" value={fmt(r.totals.peak_concurrency)} />
                  <Figure testId="average-concurrency" label="average concurrency" value={fmt(r.totals.average_concurrency)} />
                  <Figure testId="total-sessions" label="sessions" value={fmt(r.totals.sessions)} />
                </div>
                {empty && <p className="muted">{STRINGS.usageNothing}</p>}
                <ChartCard
                  title={STRINGS.usageAgentChart}
                  testId="chart-agent-minutes"
                  chart={<AgentMinutesChart report={r} />}
                  table={
                    <table className="pixel-table">
                      <thead>
                        <tr>
                          <th scope="col">Day</th>
                          {r.providers.map((p) => (
                            <th scope="col" key={p}>
                              {p}
                            </th>
                          ))}
                        </tr>
                      </thead>
                      <tbody>
                        {r.daily
                          .filter((d) => Object.values(d.agent_minutes).some((v) => v))
                          .map((d) => (
                            <tr key={d.day}>
                              <td>{d.day}</td>
                              {r.providers.map((p) => (
                                <td key={p}>{fmt(d.agent_minutes[p] ?? 0)}</td>
                              ))}
                            </tr>
                          ))}
                      </tbody>
                    </table>
                  }
                />
                <div className="chart-row">
                  <ChartCard
                    title={STRINGS.usageConcurrencyChart}
                    testId="chart-concurrency"
                    chart={r.totals.peak_concurrency ? <ConcurrencyChart report={r} /> : <p className="muted">No agent session ran in this period.</p>}
                    table={
                      <table className="pixel-table">
                        <thead>
                          <tr>
                            <th scope="col">Hour (UTC)</th>
                            <th scope="col">Peak</th>
                            <th scope="col">Average</th>
                          </tr>
                        </thead>
                        <tbody>
                          {r.concurrency
                            .filter((c) => c.peak)
                            .map((c) => (
                              <tr key={c.t}>
                                <td>{new Date(c.t).toISOString().slice(0, 13).replace('T', ' ')}:00</td>
                                <td>{c.peak}</td>
                                <td>{fmt(c.average)}</td>
                              </tr>
                            ))}
                        </tbody>
                      </table>
                    }
                  />
                  <ChartCard
                    title={STRINGS.usagePatrolChart}
                    testId="chart-patrol"
                    chart={<PatrolChart report={r} />}
                    table={
                      <table className="pixel-table">
                        <thead>
                          <tr>
                            <th scope="col">Day</th>
                            <th scope="col">Patrol minutes</th>
                          </tr>
                        </thead>
                        <tbody>
                          {r.daily
                            .filter((d) => d.patrol_minutes)
                            .map((d) => (
                              <tr key={d.day}>
                                <td>{d.day}</td>
                                <td>{fmt(d.patrol_minutes)}</td>
                              </tr>
                            ))}
                        </tbody>
                      </table>
                    }
                  />
                </div>
                <div className="chart-row">
                  <FigureTable
                    title={STRINGS.usageTopRepos}
                    testId="top-repos"
                    columns={['Repository', 'Agent-min', 'Patrol min', 'Invocations']}
                    rows={r.by_repo.slice(0, 10).map((x) => ({ key: x.repo_id, cells: [x.name, fmt(x.agent_minutes), fmt(x.patrol_minutes), x.invocations] }))}
                  />
                  <FigureTable
                    title={STRINGS.usageTopUsers}
                    testId="top-users"
                    columns={['User', 'Agent-min', 'Sessions']}
                    rows={r.by_user.slice(0, 10).map((x) => ({ key: x.user_id, title: x.email, cells: [x.name, fmt(x.agent_minutes), x.sessions] }))}
                  />
                  <FigureTable
                    title={STRINGS.usageByProvider}
                    testId="by-provider"
                    columns={['Provider', 'Agent-min', 'Patrol min', 'Invocations']}
                    rows={r.by_provider.map((x) => ({ key: x.provider, cells: [x.provider, fmt(x.agent_minutes), fmt(x.patrol_minutes), x.invocations] }))}
                  />
                </div>
              </>
            )}
          </>
        )}
      </main>
    </div>
  );
}
