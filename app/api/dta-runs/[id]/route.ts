import { route } from '../../_lib/route';

// GET /api/dta-runs/:id – one DTA run: status, reason, counts, verifier, patch, commit
export const GET = route({ role: 'viewer' }, async ({ services, principal, params }) => services.dtaRuns.get(principal, params.id!));
