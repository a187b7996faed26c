import { actorOf } from '../../../../../server/services/audit';
import { route } from '../../../_lib/route';

// DELETE /api/runners/:id/alert – an admin has seen the runner's security alert (the audit log keeps it)
export const DELETE = route({ role: 'admin' }, async ({ services, principal, params, ip }) => {
  await services.runners.dismissSecurityAlert(principal.orgId, params.id!, actorOf(principal), ip);
  return null;
});
