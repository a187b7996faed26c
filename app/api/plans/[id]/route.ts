import { PlanIdSchema, PlanTermsSchema } from '../../../../protocol';
import { errorResponse, route } from '../../_lib/route';

// PUT /api/plans/:id – replace a plan's limits and prices (installation admin; applies at once)
export const PUT = route({ role: 'admin', body: PlanTermsSchema }, async ({ services, principal, body, params }) => {
  const id = PlanIdSchema.safeParse(params.id);
  if (!id.success) return errorResponse({ code: 'NOT_FOUND', message: `There is no plan "${params.id}" (free, team or enterprise).` });
  return services.plans.update(principal, id.data, body);
});
