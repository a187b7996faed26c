import { NextResponse } from 'next/server';
import { z } from 'zod';
import { describeZodError } from '../../../../../protocol';
import { errorResponse, route } from '../../../_lib/route';

const QuerySchema = z.object({ path: z.string().min(1).max(500) });

// GET /api/dta-runs/:id/artifacts?path=.runs/… – one of the run's JSON artifacts, as a download
export const GET = route({ role: 'viewer' }, async ({ req, services, principal, params }) => {
  const q = QuerySchema.safeParse(Object.fromEntries(req.nextUrl.searchParams));
  if (!q.success) return errorResponse({ code: 'BAD_REQUEST', message: describeZodError(q.error) });
  const a = await services.dtaRuns.artifact(principal, params.id!, q.data.path);
  return new NextResponse(a.content, { headers: { 'content-type': 'application/json; charset=utf-8', 'content-disposition': `attachment; filename="${a.name}"` } });
});
