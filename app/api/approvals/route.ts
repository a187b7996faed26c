import { z } from 'zod';
import { route } from '../_lib/route';

const StateSchema = z.enum(['pending', 'allowed', 'denied', 'expired']).optional();

// GET /api/approvals?state=pending – the org's approval requests, newest first
export const GET = route({ role: 'viewer' }, async ({ req, services, principal }) => {
  const state = StateSchema.safeParse(req.nextUrl.searchParams.get('state') ?? undefined);
  return services.approvals.list(principal, state.success ? state.data : undefined);
});
