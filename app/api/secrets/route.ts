import { route } from '../_lib/route';

// GET /api/secrets – names and dates of the org's secrets (values are never sent back)
export const GET = route({ role: 'admin' }, async ({ services, principal }) => services.secrets.list(principal));
