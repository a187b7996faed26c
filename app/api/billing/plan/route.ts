import { ChangePlanBodySchema } from '../../../../protocol';
import { route } from '../../_lib/route';

// POST /api/billing/plan – move the org to another plan from the next period on
export const POST = route({ role: 'admin', body: ChangePlanBodySchema }, async ({ services, principal, body }) =>
  services.billing.changePlan(principal, body.plan_id),
);
