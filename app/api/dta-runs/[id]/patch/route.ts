import { NextResponse } from 'next/server';
import { route } from '../../../_lib/route';

// GET /api/dta-runs/:id/patch – the proposed unified patch, as a download
export const GET = route({ role: 'viewer' }, async ({ services, principal, params }) => {
  const run = await services.dtaRuns.get(principal, params.id!);
  return new NextResponse(run.patch ?? '', { headers: { 'content-type': 'text/x-diff; charset=utf-8', 'content-disposition': `attachment; filename="${run.id}.patch"` } });
});
