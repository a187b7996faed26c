import { route } from '../../_lib/route';

// DELETE /api/invites/:id – revoke an invite that was not accepted yet
export const DELETE = route({ role: 'admin' }, async ({ services, principal, params, ip }) => {
  await services.members.revokeInvite(principal, params.id!, { ip });
  return null;
});
