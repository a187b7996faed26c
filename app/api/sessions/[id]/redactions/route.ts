import { route } from '../../../_lib/route';

// GET /api/sessions/:id/redactions – the session's redaction receipt (rule and secret names, counts, seqs; never values)
export const GET = route({ role: 'viewer' }, async ({ services, principal, params }) => services.redaction.receipt(principal, params.id!));
