import { route } from '../_lib/route';

// GET /api/me – who is logged in, in which org, with which role
export const GET = route({ role: 'viewer' }, async ({ services, principal }) => services.auth.toMe(principal));
