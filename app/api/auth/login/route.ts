import { NextResponse } from 'next/server';
import { LoginBodySchema } from '../../../../protocol';
import { SESSION_COOKIE } from '../../../../server/services/auth';
import { route, withSessionCookie } from '../../_lib/route';

// POST /api/auth/login – check email and password, set a new session cookie (the old one ends)
export const POST = route({ role: 'public', body: LoginBodySchema }, async ({ req, services, body, ip }) => {
  const { token, expiresAt, mustChangePassword } = await services.auth.login(body.email, body.password, {
    ip,
    previousToken: req.cookies.get(SESSION_COOKIE)?.value,
  });
  return withSessionCookie(NextResponse.json({ ok: true, data: { must_change_password: mustChangePassword } }), req, token, expiresAt);
});
