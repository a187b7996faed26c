import { route } from '../_lib/route';

// GET /api/billing – plan, current period's line items, invoices of closed periods, the plans to pick from
export const GET = route({ role: 'admin' }, async ({ services, principal }) => services.billing.overview(principal));
