import { UpdatePatrolBodySchema } from '../../../../protocol';
import { route } from '../../_lib/route';

// PATCH /api/patrols/:id – change a patrol's command or schedule, enable or disable it (admins)
export const PATCH = route({ role: 'admin', body: UpdatePatrolBodySchema }, async ({ services, principal, params, body, ip }) =>
  services.patrols.update(principal, params.id!, body, ip),
);
