import { SpawnSessionBodySchema } from '../../../protocol';
import { route } from '../_lib/route';

// GET /api/sessions – live and recently ended sessions
export const GET = route({ role: 'viewer' }, async ({ services, principal }) => services.sessions.list(principal.orgId));

// POST /api/sessions – spawn an agent session in a room
export const POST = route({ role: 'operator', body: SpawnSessionBodySchema }, async ({ services, principal, body }) =>
  services.sessions.spawn(principal, body),
);
