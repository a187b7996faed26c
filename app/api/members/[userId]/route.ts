import { ChangeRoleBodySchema } from '../../../../protocol';
import { route } from '../../_lib/route';

// PATCH /api/members/:userId – change a member's role (the last admin stays admin)
export const PATCH = route({ role: 'admin', body: ChangeRoleBodySchema }, async ({ services, principal, params, body, ip }) =>
  services.members.changeRole(principal, params.userId!, body.role, { ip }),
);

// DELETE /api/members/:userId – remove a member from the org; their open sockets leave it at once
export const DELETE = route({ role: 'admin' }, async ({ services, principal, params, ip }) => {
  await services.members.remove(principal, params.userId!, { ip });
  return null;
});
