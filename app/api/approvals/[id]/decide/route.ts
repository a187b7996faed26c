import { DecideApprovalBodySchema } from '../../../../../protocol';
import { route } from '../../../_lib/route';

// POST /api/approvals/:id/decide – Allow or Deny, as the logged-in approver (never a payload field)
export const POST = route({ role: 'approver', body: DecideApprovalBodySchema }, async ({ services, principal, params, body }) =>
  services.approvals.decide(principal, params.id!, body.decision, body.note),
);
