import { route } from '../../../_lib/route';

// POST /api/quests/:id/run – start a planned quest on a runner that can reach its repository
export const POST = route({ role: 'operator' }, async ({ services, principal, params }) => services.quests.run(principal, params.id!));
