import { RadarCompareBodySchema } from '../../../../protocol';
import { route } from '../../_lib/route';

// POST /api/radar/compare – two sessions' overlapping hunks, and with merge=true the merge preview (runs on their runner)
export const POST = route({ role: 'viewer', body: RadarCompareBodySchema }, async ({ services, principal, body }) => services.radar.compare(principal, body));
