import { PolicySuggestionDecideBodySchema } from '../../../../protocol';
import { route } from '../../_lib/route';

// POST /api/policy-suggestions/:id – an admin applies (the org policy changes, audited) or dismisses it
export const POST = route({ role: 'admin', body: PolicySuggestionDecideBodySchema }, async ({ services, principal, params, body }) => services.suggestions.decide(principal, params.id!, body));
