import { route } from '../_lib/route';

// GET /api/alerts – open alerts from patrols (the bug sprites)
export const GET = route({ role: 'viewer' }, async ({ services, principal }) => services.alerts.listOpen(principal.orgId));
