import { route } from '../../../../../_lib/route';

// POST /api/quests/:id/steps/:step/replay – replay the step's receipt on the runner (verified or mismatch arrives on the step)
export const POST = route({ role: 'operator' }, async ({ services, principal, params }) => services.quests.replay(principal, params.id!, params.step!));
