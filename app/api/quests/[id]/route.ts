import { route } from '../../_lib/route';

// GET /api/quests/:id – the quest: plan, steps with state, RunResult, receipt and replay
export const GET = route({ role: 'viewer' }, async ({ services, principal, params }) => services.quests.get(principal, params.id!));
