import { route } from '../../../../_lib/route';

// POST /api/repos/:id/webhook/rotate – a new webhook secret (the old one stops working at once)
export const POST = route({ role: 'admin' }, async ({ services, principal, params, ip }) => services.webhooks.rotate(principal, params.id!, ip));
