import { NextResponse } from 'next/server';
import { SetupBodySchema } from '../../../protocol';
import { getServices } from '../../../server/context';
import { route, withSessionCookie } from '../_lib/route';

// GET /api/setup – whether the first admin account still has to be created
export const GET = route({ role: 'public' }, async ({ services }) => ({ needed: await services.auth.isSetupNeeded() }));

// POST /api/setup – create the first admin account and log it in
export const POST = route({ role: 'public', body: SetupBodySchema }, async ({ req, body }) => {
  const services = getServices();
  const { token, expiresAt } = await services.auth.setup(body, services.orgId);
  return withSessionCookie(NextResponse.json({ ok: true, data: null }), req, token, expiresAt);
});
