import { route } from '../../_lib/route';

// GET /api/runs/:id – one run with its status, stdout, parsed result and exit code
export const GET = route({ role: 'viewer' }, async ({ services, principal, params }) => services.runs.get(principal, params.id!));
