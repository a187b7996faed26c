/**
 * A readable one-liner from anything caught (an Error's message, otherwise the value as text).
 * The one helper for it on every side, so a thrown string and a thrown Error read the same.
 */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
