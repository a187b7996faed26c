import { AuditQuerySchema, describeZodError } from '../../../protocol';
import { errorResponse, route } from '../_lib/route';

// GET /api/audit?action=&actor=&from=&to=&limit= – the org's audit log, newest first
export const GET = route({ role: 'admin' }, async ({ req, services, principal }) => {
  const q = AuditQuerySchema.safeParse(Object.fromEntries(req.nextUrl.searchParams));
  if (!q.success) return errorResponse({ code: 'BAD_REQUEST', message: describeZodError(q.error) });
  return services.audit.list(principal.orgId, q.data);
});
