import { route } from '../../_lib/route';

// GET /api/sessions/:id – one session
export const GET = route({ role: 'viewer' }, async ({ services, principal, params }) => services.sessions.get(principal, params.id!));
