import type { SecretInput } from './secrets';
import { createStreamRedactor, DEFAULT_RULES } from './index';

/** Feeds `text` cut at `cuts` (positions, any order) to a fresh stream redactor; returns everything it released. */
export function streamed(text: string, secrets: SecretInput = {}, cuts: readonly number[] = []): string {
  const r = createStreamRedactor(DEFAULT_RULES, secrets);
  let out = '';
  let at = 0;
  for (const c of [...new Set(cuts)].sort((a, b) => a - b).concat(text.length)) {
    if (c <= at || c > text.length) continue;
    out += r.push(text.slice(at, c));
    at = c;
  }
  return out + r.end();
}

/** Every position: one character per push. */
export const everyChar = (text: string) => Array.from({ length: text.length }, (_, k) => k);
