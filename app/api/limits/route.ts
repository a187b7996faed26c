import { route } from '../_lib/route';

// GET /api/limits – the plan's limits and whether a spawn would pass now (the spawn box shows it)
export const GET = route({ role: 'viewer' }, async ({ services, principal }) => services.limits.status(principal));
