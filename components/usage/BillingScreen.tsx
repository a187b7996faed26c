'use client';
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { formatCents, type BillingOverview, type LineItem, type Plan, type PlanId } from '../../protocol';
import { api, ApiRequestError } from '../ui/api';
import Header from '../ui/Header';
import { STRINGS } from '../ui/strings';
import { useRequireLogin } from '../ui/use-auth-redirect';
import { PlanEditor } from './PlanEditor';

const qty = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 2 });

function terms(p: Plan): string {
  return [
    `${p.max_concurrent_sessions} concurrent session${p.max_concurrent_sessions === 1 ? '' : 's'}`,
    `${p.included_agent_minutes.toLocaleString('en-US')} agent-minutes included`,
    p.monthly_cap_minutes === null ? 'no hard cap' : `hard cap ${p.monthly_cap_minutes.toLocaleString('en-US')} minutes`,
    `${formatCents(p.base_price_cents)} / month`,
    `${formatCents(p.overage_cents_per_minute)} per extra minute`,
    p.patrol_schedules === null ? 'unlimited patrol schedules' : `${p.patrol_schedules} patrol schedule${p.patrol_schedules === 1 ? '' : 's'}`,
    p.allowed_providers.length ? `providers: ${p.allowed_providers.join(', ')}` : 'every provider',
    p.allowed_repos.length ? `repositories: ${p.allowed_repos.join(', ')}` : 'every repository',
  ].join(' · ');
}

function LineItems({ items, total, testId }: { items: LineItem[]; total: number; testId: string }) {
  return (
    <table className="pixel-table line-items" data-testid={testId}>
      <thead>
        <tr>
          <th scope="col">Item</th>
          <th scope="col">Quantity</th>
          <th scope="col">Unit price</th>
          <th scope="col">Amount</th>
        </tr>
      </thead>
      <tbody>
        {items.map((i) => (
          <tr key={i.kind} data-line={i.kind}>
            <td>{i.description}</td>
            <td>
              {qty(i.quantity)} {i.unit}
              {i.quantity === 1 ? '' : 's'}
            </td>
            <td>{formatCents(i.unit_price_cents)}</td>
            <td className="amount">{formatCents(i.amount_cents)}</td>
          </tr>
        ))}
      </tbody>
      <tfoot>
        <tr>
          <th scope="row" colSpan={3}>
            Total
          </th>
          <td className="amount" data-testid={`${testId}-total`}>
            {formatCents(total)}
          </td>
        </tr>
      </tfoot>
    </table>
  );
}

/** The billing page (admins): plan, this period's line items, invoices of closed periods, plan change, plan terms. */
export default function BillingScreen() {
  const me = useRequireLogin();
  const isAdmin = me.data?.role === 'admin';
  const qc = useQueryClient();
  const billing = useQuery({ queryKey: ['billing'], queryFn: () => api<BillingOverview>('/api/billing'), enabled: isAdmin });
  const [choice, setChoice] = useState<PlanId | ''>('');
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const change = useMutation({
    mutationFn: (plan_id: PlanId) => api<{ next_period: string }>('/api/billing/plan', { body: { plan_id } }),
    onSuccess: (r, planId) => {
      const b = billing.data;
      setMessage({
        ok: true,
        text: b && planId === b.plan.id ? `You stay on ${b.plan.name}.` : `The change takes effect on ${r.next_period}; this period stays on ${b?.plan.name ?? 'the current plan'}.`,
      });
      void qc.invalidateQueries({ queryKey: ['billing'] });
    },
    onError: (e) => setMessage({ ok: false, text: e instanceof ApiRequestError ? e.message : String(e) }),
  });

  if (!me.data) return <main className="center-note">Loading…</main>;
  const b = billing.data;

  return (
    <div className="app-shell">
      <Header me={me.data} />
      <main className="settings billing">
        <h1>{STRINGS.billingTitle}</h1>
        {!isAdmin ? (
          <p className="card admins-only" role="alert">
            {STRINGS.adminsOnly}
          </p>
        ) : billing.error ? (
          <p className="error-line" role="alert">
            {billing.error.message}
          </p>
        ) : !b ? (
          <p className="muted">Reading the plan and the usage ticks…</p>
        ) : (
          <>
            <section className="card" aria-label={STRINGS.billingPlan}>
              <h2>
                {STRINGS.billingPlan}: <span data-testid="plan-name">{b.plan.name}</span>
              </h2>
              <p className="muted small">{terms(b.plan)}</p>
              {b.next && (
                <p className="warn-line" data-testid="next-plan">
                  From {b.next.from}: {b.next.plan.name}.
                </p>
              )}
              <form
                className="inline-form"
                aria-label={STRINGS.billingChangePlan}
                onSubmit={(e) => {
                  e.preventDefault();
                  if (choice) change.mutate(choice);
                }}
              >
                <label>
                  Plan from next period
                  <select value={choice || (b.next?.plan.id ?? b.plan.id)} onChange={(e) => setChoice(e.target.value as PlanId)}>
                    {b.plans.map((p) => (
                      <option key={p.id} value={p.id}>
                        {p.name} ({formatCents(p.base_price_cents)} / month)
                      </option>
                    ))}
                  </select>
                </label>
                <button className="btn btn-primary" type="submit" disabled={!choice || change.isPending}>
                  {STRINGS.billingChangePlan}
                </button>
              </form>
              {message && (
                <p className={message.ok ? 'ok-text' : 'error-line'} role={message.ok ? 'status' : 'alert'}>
                  {message.text}
                </p>
              )}
            </section>

            <section className="card" aria-label={STRINGS.billingCurrent}>
              <h2>
                {STRINGS.billingCurrent}: {b.current.period}
              </h2>
              <p className="muted small">
                {b.current.from.slice(0, 10)} to {b.current.to.slice(0, 10)} (UTC) · {qty(b.current.agent_minutes)} agent-minutes ·{' '}
                {qty(b.current.patrol_minutes)} patrol minutes · computed from the stored usage ticks; final when the month ends.
              </p>
              <LineItems items={b.current.line_items} total={b.current.total_cents} testId="current-items" />
            </section>

            <section className="card" aria-label={STRINGS.billingInvoices}>
              <h2>{STRINGS.billingInvoices}</h2>
              {b.invoices.length === 0 ? (
                <p className="muted">{STRINGS.billingNoInvoices}</p>
              ) : (
                <ul className="invoice-list">
                  {b.invoices.map((inv) => (
                    <li key={inv.id} data-period={inv.period}>
                      <details>
                        <summary>
                          <span className="invoice-number">{inv.number}</span> · {inv.period} · {inv.plan.name} · <strong>{formatCents(inv.total_cents)}</strong>{' '}
                          <span className="muted small">issued {inv.issued_at.slice(0, 10)}</span>
                          {inv.late_minutes > 0 && <span className="warn-line small"> · {qty(inv.late_minutes)} minutes arrived after issue (not billed)</span>}
                        </summary>
                        <LineItems items={inv.line_items} total={inv.total_cents} testId={`invoice-${inv.period}`} />
                      </details>
                    </li>
                  ))}
                </ul>
              )}
            </section>

            <section className="card" aria-label={STRINGS.billingPlans}>
              <h2>{STRINGS.billingPlans}</h2>
              {b.can_edit_plans ? (
                // Keyed by id only: a save refetches the plans, and the form (with its message) must stay.
                b.plans.map((p) => <PlanEditor key={p.id} plan={p} canEdit />)
              ) : (
                <>
                  <p className="muted small">{STRINGS.billingPlansReadOnly}</p>
                  <table className="pixel-table">
                    <thead>
                      <tr>
                        <th scope="col">Plan</th>
                        <th scope="col">Concurrent</th>
                        <th scope="col">Included min</th>
                        <th scope="col">Cap</th>
                        <th scope="col">Base</th>
                        <th scope="col">Overage / min</th>
                        <th scope="col">Patrols</th>
                        <th scope="col">Providers</th>
                        <th scope="col">Repositories</th>
                      </tr>
                    </thead>
                    <tbody>
                      {b.plans.map((p) => (
                        <PlanEditor key={p.id} plan={p} canEdit={false} />
                      ))}
                    </tbody>
                  </table>
                </>
              )}
            </section>
          </>
        )}
      </main>
    </div>
  );
}
