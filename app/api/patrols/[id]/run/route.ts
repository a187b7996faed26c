import { route } from '../../../_lib/route';

// POST /api/patrols/:id/run – run now, at the newest commit (operators)
export const POST = route({ role: 'operator' }, async ({ services, principal, params, ip }) => services.patrols.runNow(principal, params.id!, ip));
