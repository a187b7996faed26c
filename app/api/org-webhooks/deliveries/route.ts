import { route } from '../../_lib/route';

// GET /api/org-webhooks/deliveries[?webhook=id] – the delivery log with each one's status
export const GET = route({ role: 'admin' }, async ({ req, services, principal }) => services.outgoingWebhooks.deliveries(principal, req.nextUrl.searchParams.get('webhook') ?? undefined));
