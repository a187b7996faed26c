import { randomBytes } from 'node:crypto';
import { createTwoFilesPatch } from 'diff';
import { PolicySuggestionDecideBodySchema, describeZodError, type Policy, type PolicySuggestionSummary } from '../../protocol';
import type { Db } from '../db';
import type { AuditService } from './audit';
import { requireRole, type Principal } from './auth';
import { AppError, notFound } from './errors';
import type { PolicyService } from './policy';

/**
 * Approvals that learn (issue 19 item 3): after approvers allow the same kind of action (same
 * category, same policy rule — "merge into protected branch main") N times, the org is offered
 * "always allow this" as a rule in its policy, shown as a diff of the policy. Nothing changes
 * until an admin applies it; offering, applying and dismissing are audited.
 */

/** Allows of one kind before "always allow this" is offered (the fourth allow offers it). */
export const DEFAULT_ALLOWS_BEFORE_SUGGESTING = 4;
/** Categories that may be always-allowed: reading an org secret is asked every time. */
const LEARNABLE = new Set(['merge', 'deps_add', 'deploy']);
/** Allowed requests read to count a kind (the newest first); more than enough to reach N. */
const COUNT_WINDOW = 500;

type Learnable = 'merge' | 'deps_add' | 'deploy';
type Row = { id: string; category: string; rule: string; allowCount: number; state: string; createdAt: Date; decidedBy: string | null };

const kindKey = (category: string, rule: string) => `${category}\u0000${rule}`;
const pretty = (p: Policy) => `${JSON.stringify(p, null, 2)}\n`;

/** The org policy with this kind always allowed (unchanged when it already is). */
export function withAlwaysAllow(policy: Policy, category: Learnable, rule: string): Policy {
  const list = policy.always_allow ?? [];
  if (list.some((a) => a.category === category && a.rule === rule)) return policy;
  return { ...policy, always_allow: [...list, { category, rule }] };
}

export function policyDiff(before: Policy, after: Policy): string {
  return createTwoFilesPatch('org policy (now)', 'org policy (with this rule)', pretty(before), pretty(after), undefined, undefined, { context: 3 });
}

export function createPolicySuggestionService(db: Db, deps: { policy: PolicyService; audit: AuditService; allowsBeforeSuggesting?: number }) {
  const threshold = deps.allowsBeforeSuggesting ?? DEFAULT_ALLOWS_BEFORE_SUGGESTING;

  async function summary(orgId: string, r: Row): Promise<PolicySuggestionSummary> {
    const now = await deps.policy.getOrg(orgId);
    return {
      id: r.id,
      category: r.category,
      rule: r.rule,
      allow_count: r.allowCount,
      state: r.state as PolicySuggestionSummary['state'],
      diff: r.state === 'offered' ? policyDiff(now, withAlwaysAllow(now, r.category as Learnable, r.rule)) : '',
      created_at: r.createdAt.toISOString(),
      decided_by: r.decidedBy,
    };
  }

  return {
    threshold,

    /** After an approver allowed a request: count its kind, offer the rule at the threshold. */
    async afterAllow(orgId: string, approval: { category: string; context: string }): Promise<void> {
      if (!LEARNABLE.has(approval.category)) return;
      const rule = (JSON.parse(approval.context) as { rule?: string }).rule;
      if (!rule) return;
      const key = kindKey(approval.category, rule);
      const allowed = await db.approval.findMany({ where: { orgId, category: approval.category, state: 'allowed', reason: 'decided' }, select: { context: true }, orderBy: { requestedAt: 'desc' }, take: COUNT_WINDOW });
      const count = allowed.filter((a) => (JSON.parse(a.context) as { rule?: string }).rule === rule).length;
      if (count < threshold) return;
      const org = await deps.policy.getOrg(orgId);
      if (withAlwaysAllow(org, approval.category as Learnable, rule) === org) return;
      const existing = await db.policySuggestion.findUnique({ where: { orgId_kindKey: { orgId, kindKey: key } } });
      if (existing) {
        // A dismissed offer stays dismissed; an open one shows the new count.
        if (existing.state === 'offered') await db.policySuggestion.update({ where: { id: existing.id }, data: { allowCount: count } });
        return;
      }
      const id = `psug_${randomBytes(12).toString('base64url')}`;
      await db.policySuggestion.create({ data: { id, orgId, kindKey: key, category: approval.category, rule, allowCount: count, state: 'offered' } });
      await deps.audit.record({ orgId, actor: 'system', action: 'policy.suggestion_offered', target: id, detail: { category: approval.category, rule, allows: count } });
    },

    async list(p: Principal): Promise<PolicySuggestionSummary[]> {
      requireRole(p, 'approver');
      const rows = await db.policySuggestion.findMany({ where: { orgId: p.orgId }, orderBy: { createdAt: 'desc' }, take: 100 });
      return Promise.all(rows.map((r) => summary(p.orgId, r)));
    },

    /** Apply (the org policy gains the rule; policy.changed and policy.suggestion_applied are audited) or dismiss. */
    async decide(p: Principal, id: string, input: unknown): Promise<PolicySuggestionSummary> {
      requireRole(p, 'admin');
      const parsed = PolicySuggestionDecideBodySchema.safeParse(input);
      if (!parsed.success) throw new AppError('BAD_REQUEST', `Bad request: ${describeZodError(parsed.error)}`);
      const row = await db.policySuggestion.findFirst({ where: { id, orgId: p.orgId } });
      if (!row) throw notFound('That suggestion');
      if (row.state !== 'offered') throw new AppError('CONFLICT', `That suggestion was already ${row.state}${row.decidedBy ? ` by ${row.decidedBy}` : ''}.`);
      const claim = await db.policySuggestion.updateMany({ where: { id, state: 'offered' }, data: { state: parsed.data.decision === 'apply' ? 'applied' : 'dismissed', decidedBy: p.email, decidedAt: new Date() } });
      if (!claim.count) throw new AppError('CONFLICT', 'That suggestion was just decided by someone else.');
      if (parsed.data.decision === 'apply') {
        const before = await deps.policy.getOrg(p.orgId);
        const after = withAlwaysAllow(before, row.category as Learnable, row.rule);
        try {
          await deps.policy.setOrg(p, after);
        } catch (err) {
          await db.policySuggestion.update({ where: { id }, data: { state: 'offered', decidedBy: null, decidedAt: null } });
          throw err;
        }
        await deps.audit.record({ orgId: p.orgId, actor: p.email, action: 'policy.suggestion_applied', target: id, detail: { category: row.category, rule: row.rule, diff: policyDiff(before, after) } });
      } else {
        await deps.audit.record({ orgId: p.orgId, actor: p.email, action: 'policy.suggestion_dismissed', target: id, detail: { category: row.category, rule: row.rule } });
      }
      return summary(p.orgId, (await db.policySuggestion.findUniqueOrThrow({ where: { id } })) as Row);
    },
  };
}

export type PolicySuggestionService = ReturnType<typeof createPolicySuggestionService>;
