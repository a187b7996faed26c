import { CreateOrgBodySchema } from '../../../protocol';
import { SESSION_COOKIE } from '../../../server/services/auth';
import { route } from '../_lib/route';

// POST /api/orgs – a new organisation with the caller (an admin) as its admin; this login switches to it
export const POST = route({ role: 'admin', body: CreateOrgBodySchema }, async ({ req, services, principal, body, ip }) =>
  services.members.createOrg(principal, req.cookies.get(SESSION_COOKIE)!.value, body.name, { ip }),
);
