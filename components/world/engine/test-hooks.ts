/**
 * Whether the page publishes window.__village (the read-only debug / test API). Only in test
 * builds (NEXT_PUBLIC_AV_TEST_HOOKS=1 at build time, set by the test script before `next build`)
 * or when a person asks for it with `?debug` in the address. Production pages do not expose it.
 */
export function testHooksEnabled(): boolean {
  if (process.env.NEXT_PUBLIC_AV_TEST_HOOKS === '1') return true;
  if (typeof window === 'undefined') return false;
  return new URLSearchParams(window.location.search).has('debug');
}
