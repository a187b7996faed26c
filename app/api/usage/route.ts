import { describeZodError, UsageQuerySchema } from '../../../protocol';
import { periodOf } from '../../../common/period';
import { errorResponse, route } from '../_lib/route';

// GET /api/usage?period=YYYY-MM – the org's usage figures for one billing period (default: this month)
export const GET = route({ role: 'admin' }, async ({ req, services, principal }) => {
  const q = UsageQuerySchema.safeParse(Object.fromEntries(req.nextUrl.searchParams));
  if (!q.success) return errorResponse({ code: 'BAD_REQUEST', message: describeZodError(q.error) });
  return services.usage.report(principal.orgId, q.data.period ?? periodOf(Date.now()));
});
