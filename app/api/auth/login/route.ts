import { NextResponse } from 'next/server';
import { LoginBodySchema } from '../../../../protocol';
import { route, withSessionCookie } from '../../_lib/route';

// POST /api/auth/login – check email and password, set the session cookie
export const POST = route({ role: 'public', body: LoginBodySchema }, async ({ req, services, body }) => {
  const { token, expiresAt } = await services.auth.login(body.email, body.password);
  return withSessionCookie(NextResponse.json({ ok: true, data: null }), req, token, expiresAt);
});
