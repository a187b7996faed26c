import { route } from '../../../_lib/route';

// POST /api/sessions/:id/stop – SIGTERM, grace period, SIGKILL of the process group
export const POST = route({ role: 'operator' }, async ({ services, principal, params }) => services.sessions.stop(principal, params.id!));
