import { z } from 'zod';
import { DEFAULT_POLICY } from '../../../server/services/policy';
import { route } from '../_lib/route';

// GET /api/policy – the org's policy and the defaults it overrides
export const GET = route({ role: 'viewer' }, async ({ services, principal }) => ({
  policy: await services.policy.getOrg(principal.orgId),
  defaults: DEFAULT_POLICY,
}));

// PUT /api/policy – replace the org's policy (validated; a bad one is refused and nothing is saved)
// (The service validates the policy itself; route() only reads the JSON, within the body limit.)
export const PUT = route({ role: 'admin', body: z.unknown() }, async ({ body, services, principal }) => services.policy.setOrg(principal, body));
