import { InviteBodySchema } from '../../../protocol';
import { route } from '../_lib/route';

// POST /api/invites – an invite link for an email and a role (the token is shown once, valid 7 days)
export const POST = route({ role: 'admin', body: InviteBodySchema }, async ({ services, principal, body, ip }) =>
  services.members.invite(principal, body.email, body.role, { ip }),
);
