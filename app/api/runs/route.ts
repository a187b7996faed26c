import { NextResponse } from 'next/server';
import { CreateRunBodySchema } from '../../../protocol';
import { route } from '../_lib/route';

// GET /api/runs – the latest runs of deterministic agents, newest first
export const GET = route({ role: 'viewer' }, async ({ services, principal }) => services.runs.list(principal.orgId));

// POST /api/runs – run a deterministic agent on the runner that owns it (201 with the run)
export const POST = route({ role: 'operator', body: CreateRunBodySchema }, async ({ services, principal, body, ip }) =>
  NextResponse.json({ ok: true, data: await services.runs.create(principal, body, ip) }, { status: 201 }),
);
