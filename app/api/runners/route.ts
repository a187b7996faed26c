import { route } from '../_lib/route';

// GET /api/runners – the org's runners, online or not
export const GET = route({ role: 'viewer' }, async ({ services, principal }) => services.runners.list(principal.orgId));
