import { NextResponse } from 'next/server';
import { AuditQuerySchema, describeZodError } from '../../../protocol';
import { errorResponse, route } from '../_lib/route';

// GET /api/audit.csv?action=&actor=&from=&to= – the same filter as CSV, as a download
export const GET = route({ role: 'admin' }, async ({ req, services, principal }) => {
  const q = AuditQuerySchema.safeParse(Object.fromEntries(req.nextUrl.searchParams));
  if (!q.success) return errorResponse({ code: 'BAD_REQUEST', message: describeZodError(q.error) });
  const csv = await services.audit.csv(principal.orgId, q.data);
  return new NextResponse(csv, {
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="audit-${new Date().toISOString().slice(0, 10)}.csv"`,
      'cache-control': 'no-store',
    },
  });
});
