import { describeZodError, PatrolRunsQuerySchema } from '../../../protocol';
import { errorResponse, route } from '../_lib/route';

// GET /api/patrol-runs?repo_id=&patrol_id=&limit= – a repository's patrol history, newest first
export const GET = route({ role: 'viewer' }, async ({ req, services, principal }) => {
  const q = PatrolRunsQuerySchema.safeParse(Object.fromEntries(req.nextUrl.searchParams));
  if (!q.success) return errorResponse({ code: 'BAD_REQUEST', message: describeZodError(q.error) });
  return services.patrols.runs(principal, q.data);
});
