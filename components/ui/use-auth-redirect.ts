'use client';
import { useEffect } from 'react';
import { useRouter } from 'next/navigation';
import { api, ApiRequestError } from './api';
import { useMe } from './use-world';

/**
 * The signed-in user, or a redirect to /setup (first run) or /login; an account that still has a
 * one-time password goes to /password first.
 */
export function useRequireLogin(opts: { allowPendingPassword?: boolean } = {}) {
  const router = useRouter();
  const me = useMe();
  const pending = !opts.allowPendingPassword && me.data?.must_change_password === true;
  useEffect(() => {
    if (pending) return void router.replace('/password');
    if (!(me.error instanceof ApiRequestError) || me.error.code !== 'UNAUTHORIZED') return;
    void api<{ needed: boolean }>('/api/setup').then((s) => router.replace(s.needed ? '/setup' : '/login'));
  }, [me.error, router, pending]);
  return me;
}
