import { route } from '../../../_lib/route';

// GET /api/repos/:id/webhook – where GitHub posts pushes and the secret it signs them with (admins)
export const GET = route({ role: 'admin' }, async ({ services, principal, params }) => services.webhooks.info(principal, params.id!));
