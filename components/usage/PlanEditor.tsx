'use client';
import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { formatCents, ProviderIdSchema, type Plan, type PlanTerms, type ProviderId } from '../../protocol';
import { api, ApiRequestError } from '../ui/api';
import { STRINGS } from '../ui/strings';

const optionalInt = (v: FormDataEntryValue | null): number | null => (String(v ?? '').trim() === '' ? null : Number(v));

/** One plan's terms as a form (the installation admin), or as a read-only list (other admins). */
export function PlanEditor({ plan, canEdit }: { plan: Plan; canEdit: boolean }) {
  const qc = useQueryClient();
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const save = useMutation({
    mutationFn: (terms: PlanTerms) => api<Plan>(`/api/plans/${plan.id}`, { method: 'PUT', body: terms }),
    onSuccess: () => {
      setMessage({ ok: true, text: `${plan.name} saved; it applies at once (invoices already made keep their figures).` });
      void qc.invalidateQueries({ queryKey: ['billing'] });
      void qc.invalidateQueries({ queryKey: ['limits'] });
    },
    onError: (e) => setMessage({ ok: false, text: e instanceof ApiRequestError ? e.message : String(e) }),
  });

  if (!canEdit) {
    return (
      <tr data-plan={plan.id}>
        <td>{plan.name}</td>
        <td>{plan.max_concurrent_sessions}</td>
        <td>{plan.included_agent_minutes}</td>
        <td>{plan.monthly_cap_minutes ?? 'none'}</td>
        <td>{formatCents(plan.base_price_cents)}</td>
        <td>{formatCents(plan.overage_cents_per_minute)}</td>
        <td>{plan.patrol_schedules ?? 'unlimited'}</td>
        <td>{plan.allowed_providers.join(', ') || 'all'}</td>
        <td>{plan.allowed_repos.join(', ') || 'all'}</td>
      </tr>
    );
  }

  function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const dollars = Number(String(f.get('base_price') ?? '').trim() || '0');
    save.mutate({
      name: String(f.get('name') ?? ''),
      max_concurrent_sessions: Number(f.get('max_concurrent_sessions')),
      included_agent_minutes: Number(f.get('included_agent_minutes')),
      monthly_cap_minutes: optionalInt(f.get('monthly_cap_minutes')),
      base_price_cents: Number.isFinite(dollars) ? Math.round(dollars * 100) : NaN,
      overage_cents_per_minute: Number(f.get('overage_cents_per_minute')),
      patrol_schedules: optionalInt(f.get('patrol_schedules')),
      allowed_providers: ProviderIdSchema.options.filter((p) => f.get(`provider_${p}`) === 'on'),
      allowed_repos: String(f.get('allowed_repos') ?? '')
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean),
    });
  }

  return (
    <form className="plan-form" aria-label={`${plan.name} plan terms`} onSubmit={onSubmit} data-plan={plan.id}>
      <h3>{plan.name}</h3>
      <div className="plan-grid">
        <label>
          Name
          <input name="name" defaultValue={plan.name} maxLength={50} required />
        </label>
        <label>
          Concurrent sessions
          <input name="max_concurrent_sessions" type="number" min={1} defaultValue={plan.max_concurrent_sessions} required />
        </label>
        <label>
          Included agent-minutes / month
          <input name="included_agent_minutes" type="number" min={0} defaultValue={plan.included_agent_minutes} required />
        </label>
        <label>
          Monthly cap, minutes (empty: none)
          <input name="monthly_cap_minutes" type="number" min={0} defaultValue={plan.monthly_cap_minutes ?? ''} />
        </label>
        <label>
          Base price / month (US$)
          <input name="base_price" type="number" min={0} step={0.01} defaultValue={(plan.base_price_cents / 100).toFixed(2)} required />
        </label>
        <label>
          Overage, cents per agent-minute
          <input name="overage_cents_per_minute" type="number" min={0} defaultValue={plan.overage_cents_per_minute} required />
        </label>
        <label>
          Patrol schedules (empty: unlimited)
          <input name="patrol_schedules" type="number" min={0} defaultValue={plan.patrol_schedules ?? ''} />
        </label>
        <fieldset>
          <legend>Providers allowed (none ticked: all)</legend>
          {ProviderIdSchema.options.map((p: ProviderId) => (
            <label className="check" key={p}>
              <input type="checkbox" name={`provider_${p}`} defaultChecked={plan.allowed_providers.includes(p)} /> {p}
            </label>
          ))}
        </fieldset>
        <label className="wide">
          Repositories allowed, one glob per line over source or name (empty: all)
          <textarea name="allowed_repos" rows={2} defaultValue={plan.allowed_repos.join('\n')} />
        </label>
      </div>
      <div className="row">
        <button className="btn btn-primary" type="submit" disabled={save.isPending}>
          {STRINGS.billingSavePlan}
        </button>
        {message && (
          <span className={message.ok ? 'ok-text' : 'error-line'} role={message.ok ? 'status' : 'alert'}>
            {message.text}
          </span>
        )}
      </div>
    </form>
  );
}
