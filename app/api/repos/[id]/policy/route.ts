import { z } from 'zod';
import { route } from '../../../_lib/route';

// GET /api/repos/:id/policy – what this repository overrides of the org's policy, and the result
export const GET = route({ role: 'viewer' }, async ({ services, principal, params }) => ({
  policy: await services.policy.getRepo(principal.orgId, params.id!),
  effective: await services.policy.effective(principal.orgId, params.id!),
}));

// PUT /api/repos/:id/policy – replace this repository's overrides
export const PUT = route({ role: 'admin', body: z.unknown() }, async ({ body, services, principal, params }) =>
  services.policy.setRepo(principal, params.id!, body),
);
