import { actorOf } from '../../../../server/services/audit';
import { route } from '../../_lib/route';

// DELETE /api/runner-tokens/:id – revoke a runner token; a runner using it is refused from then on
export const DELETE = route({ role: 'admin' }, async ({ services, principal, params, ip }) => {
  await services.runners.revokeToken(principal.orgId, params.id!, actorOf(principal), ip);
  return null;
});
