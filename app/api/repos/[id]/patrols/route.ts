import { route } from '../../../_lib/route';

// GET /api/repos/:id/patrols – the repository's patrols, recent runs, health and scheduler mode
export const GET = route({ role: 'viewer' }, async ({ services, principal, params }) => services.patrols.forRepo(principal, params.id!));

// POST /api/repos/:id/patrols – set up the five patrols with commands a runner reads from the repository
export const POST = route({ role: 'admin' }, async ({ services, principal, params, ip }) => services.patrols.setup(principal, params.id!, ip));
