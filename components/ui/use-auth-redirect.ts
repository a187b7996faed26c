'use client';
import { useEffect } from 'react';
import { useRouter } from 'next/navigation';
import { api, ApiRequestError } from './api';
import { useMe } from './use-world';

/** The signed-in user, or a redirect to /setup (first run) or /login. */
export function useRequireLogin() {
  const router = useRouter();
  const me = useMe();
  useEffect(() => {
    if (!(me.error instanceof ApiRequestError) || me.error.code !== 'UNAUTHORIZED') return;
    void api<{ needed: boolean }>('/api/setup').then((s) => router.replace(s.needed ? '/setup' : '/login'));
  }, [me.error, router]);
  return me;
}
