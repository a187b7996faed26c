'use client';
import { ROLE_RANK, type Role } from '../../protocol';
import { useMe } from './use-world';

/**
 * The signed-in person's role and what it allows, for showing or hiding controls. Roles are ranked
 * (viewer < operator < approver < admin) and each role can do what the ones below it can; the
 * server checks again on every request, this only keeps buttons off screens that would be refused.
 */
export function useRole(): { role: Role | null; atLeast: (min: Role) => boolean } {
  const me = useMe();
  const role = me.data?.role ?? null;
  return { role, atLeast: (min) => roleAtLeast(role, min) };
}

/** Whether `role` ranks at or above `min` (false while nobody is known). */
export function roleAtLeast(role: Role | null | undefined, min: Role): boolean {
  return role ? ROLE_RANK[role] >= ROLE_RANK[min] : false;
}
