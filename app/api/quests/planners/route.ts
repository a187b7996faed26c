import { route } from '../../_lib/route';

// GET /api/quests/planners – the planner registry: determinism mode and cost model of each
export const GET = route({ role: 'viewer' }, async ({ services }) => services.quests.planners());
