import { NextResponse } from 'next/server';
import { describeZodError, UsageQuerySchema } from '../../../protocol';
import { periodOf } from '../../../common/period';
import { errorResponse, route } from '../_lib/route';

// GET /api/usage.csv?period=YYYY-MM – the period's ticks per day, kind, provider, repository and user, as a download
export const GET = route({ role: 'admin' }, async ({ req, services, principal }) => {
  const q = UsageQuerySchema.safeParse(Object.fromEntries(req.nextUrl.searchParams));
  if (!q.success) return errorResponse({ code: 'BAD_REQUEST', message: describeZodError(q.error) });
  const period = q.data.period ?? periodOf(Date.now());
  return new NextResponse(await services.usage.csv(principal.orgId, period), {
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="usage-${period}.csv"`,
      'cache-control': 'no-store',
    },
  });
});
