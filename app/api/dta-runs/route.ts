import { NextResponse } from 'next/server';
import { CreateDtaRunBodySchema } from '../../../protocol';
import { route } from '../_lib/route';

// GET /api/dta-runs – the latest DTA runs, newest first
export const GET = route({ role: 'viewer' }, async ({ services, principal }) => services.dtaRuns.list(principal.orgId));

// POST /api/dta-runs – dry-run a DTA on a runner that has the repository; the gate follows (201 with the run)
export const POST = route({ role: 'operator', body: CreateDtaRunBodySchema }, async ({ services, principal, body, ip }) =>
  NextResponse.json({ ok: true, data: await services.dtaRuns.create(principal, body, ip) }, { status: 201 }),
);
