import { route } from '../../_lib/route';

// GET /api/alerts/:id – one alert with its log excerpt (open or resolved)
export const GET = route({ role: 'viewer' }, async ({ services, principal, params }) => services.alerts.get(principal.orgId, params.id!));
