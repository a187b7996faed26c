import { z } from 'zod';
import { route } from '../_lib/route';

// GET /api/org-webhooks – the org's outgoing webhooks (admins)
export const GET = route({ role: 'admin' }, async ({ services, principal }) => services.outgoingWebhooks.list(principal));

// POST /api/org-webhooks – add one; the answer carries its signing secret, once (the service validates the body)
export const POST = route({ role: 'admin', body: z.unknown() }, async ({ services, principal, body }) => services.outgoingWebhooks.create(principal, body));
