import { ApprovalLinkDecideBodySchema } from '../../../../protocol';
import { route } from '../../_lib/route';

// POST /api/approval-links/decide – allow or deny with a signed one-time link, as the approver it was made for
export const POST = route({ role: 'public', body: ApprovalLinkDecideBodySchema }, async ({ services, body }) => services.approvalLinks.decide(body));
