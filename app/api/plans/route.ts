import { route } from '../_lib/route';

// GET /api/plans – every plan's terms, and whether the caller may edit them (the installation admin)
export const GET = route({ role: 'admin' }, async ({ services, principal }) => ({
  plans: await services.plans.list(),
  can_edit: await services.plans.isInstallAdmin(principal.userId),
}));
