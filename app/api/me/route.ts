import { route } from '../_lib/route';

// GET /api/me – who is logged in, in which org, with which role (and their other orgs)
export const GET = route({ role: 'viewer', pendingPassword: true }, async ({ services, principal }) => services.auth.meDetails(principal));
