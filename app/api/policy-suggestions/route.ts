import { route } from '../_lib/route';

// GET /api/policy-suggestions – "always allow this" offers, with the policy diff
export const GET = route({ role: 'approver' }, async ({ services, principal }) => services.suggestions.list(principal));
