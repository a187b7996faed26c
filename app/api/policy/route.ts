import { DEFAULT_POLICY } from '../../../server/services/policy';
import { route } from '../_lib/route';

// GET /api/policy – the org's policy and the defaults it overrides
export const GET = route({ role: 'viewer' }, async ({ services, principal }) => ({
  policy: await services.policy.getOrg(principal.orgId),
  defaults: DEFAULT_POLICY,
}));

// PUT /api/policy – replace the org's policy (validated; a bad one is refused and nothing is saved)
export const PUT = route({ role: 'admin' }, async ({ req, services, principal }) => services.policy.setOrg(principal, await req.json().catch(() => null)));
