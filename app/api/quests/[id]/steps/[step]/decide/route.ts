import { DecideQuestGateBodySchema } from '../../../../../../../protocol';
import { route } from '../../../../../_lib/route';

// POST /api/quests/:id/steps/:step/decide – an approver allows or denies a gate step
export const POST = route({ role: 'approver', body: DecideQuestGateBodySchema }, async ({ services, principal, params, body }) =>
  services.quests.decideGate(principal, params.id!, params.step!, body.decision, body.note),
);
