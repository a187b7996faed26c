import { route } from '../_lib/route';

// GET /api/radar – overlapping live sessions and DTA runs of the org
export const GET = route({ role: 'viewer' }, async ({ services, principal }) => services.radar.snapshot(principal));
