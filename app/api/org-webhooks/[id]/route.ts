import { route } from '../../_lib/route';

// DELETE /api/org-webhooks/:id – remove an outgoing webhook
export const DELETE = route({ role: 'admin' }, async ({ services, principal, params }) => services.outgoingWebhooks.remove(principal, params.id!));
