import { SwitchOrgBodySchema } from '../../../../protocol';
import { SESSION_COOKIE } from '../../../../server/services/auth';
import { route } from '../../_lib/route';

// POST /api/orgs/active – act in another org the user belongs to (this login only)
export const POST = route({ role: 'viewer', body: SwitchOrgBodySchema }, async ({ req, services, principal, body }) => {
  await services.auth.switchOrg(req.cookies.get(SESSION_COOKIE)!.value, principal, body.org_id);
  return null;
});
