import { CreateMemberBodySchema } from '../../../protocol';
import { route } from '../_lib/route';

// GET /api/members – the org's members and its pending invites
export const GET = route({ role: 'admin' }, async ({ services, principal }) => services.members.list(principal));

// POST /api/members – create a member with a one-time password (shown once, changed at first login)
export const POST = route({ role: 'admin', body: CreateMemberBodySchema }, async ({ services, principal, body, ip }) =>
  services.members.create(principal, body.email, body.name, body.role, { ip }),
);
