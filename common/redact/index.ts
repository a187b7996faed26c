/**
 * Secret redaction (ARCHITECTURE.md §7), shared by the runner (terminal stream, event payloads,
 * its log) and the control plane (which redacts everything again before storing or broadcasting).
 * Imports nothing outside this folder, so it runs unchanged in Node and in the browser.
 *
 * - Rules are data (rules/*.ts): each with its provider's documented format, a source link, a
 *   maximum length and a generator of fake examples. A rule masks the value and keeps its label.
 * - Org secrets are masked in every form a program prints them in (secrets.ts).
 * - The stream redactor (stream.ts) reads the text a person sees (terminal.ts strips escape
 *   sequences for the rules and writes them back), holds only text that could still be part of
 *   a secret, never releases it on a timer, and masks a candidate that reaches its rule's maximum
 *   length. Text that cannot start a secret passes at once.
 */
import { DEFAULT_RULES } from './rules/index';
import type { Rule } from './rule';
import { compile, scan } from './scan';
import type { SecretInput } from './secrets';
import { createStreamRedactorFrom, redactWhole, type MaskEvent, type StreamRedactor, type StreamRedactorOptions } from './stream';

export { DEFAULT_RULES } from './rules/index';
export type { Example, Rand, Rule } from './rule';
export { MAX_SECRET_LENGTH, MAX_SECRETS, MIN_SECRET_LENGTH, secretForms, type SecretInput } from './secrets';
export { CONTEXT_CHARS, END_LITERAL_MIN, MAX_HOLD_CHARS, REDACTED, type MaskEvent, type StreamRedactor, type StreamRedactorOptions } from './stream';

/** The names of the built-in rules (documentation, receipts and tests). */
export const TOKEN_RULE_NAMES: readonly string[] = DEFAULT_RULES.map((r) => r.name);

export interface Redactor {
  /** The whole text with every secret and known token masked. */
  redact(text: string, onMask?: (m: MaskEvent) => void): string;
}

/**
 * A reusable whole-text redactor for fixed org secrets (their forms are compiled once). Throws
 * TypeError/RangeError for bad secrets; values shorter than MIN_SECRET_LENGTH are ignored.
 */
export function createRedactor(secrets: SecretInput = {}, rules: readonly Rule[] = DEFAULT_RULES): Redactor {
  const compiled = compile(rules, secrets);
  return {
    redact(text, onMask) {
      if (typeof text !== 'string') throw new TypeError('redact: text must be a string');
      return text.length === 0 ? text : redactWhole(text, compiled, onMask);
    },
  };
}

/** One-shot: `createRedactor(secrets).redact(text)`. Prefer createRedactor for many texts. */
export function redact(text: string, secrets: SecretInput = {}): string {
  return createRedactor(secrets).redact(text);
}

/**
 * The redactor for a terminal stream: `push(chunk)` returns what may be shown now, `end()` what is
 * left when the stream ends (a still-undecided candidate is masked). One per session, per side.
 */
export function createStreamRedactor(rules: readonly Rule[] = DEFAULT_RULES, secrets: SecretInput = {}, opts: StreamRedactorOptions = {}): StreamRedactor {
  return createStreamRedactorFrom(compile(rules, secrets), opts);
}

/** One stretch a rule would mask: `rule` is a rule name, or 'org-secret' for a given secret. */
export interface SecretMatch {
  rule: string;
  start: number;
  end: number;
}

/**
 * Every stretch of `text` the redactor would mask, with the rule that matched (stretches may
 * overlap). What the patrols' secret scan reports: the same patterns as the redaction, by name.
 * Positions are in the text with escape sequences removed (the same as `text` when it has none).
 */
export function findSecrets(text: string, secrets: SecretInput = {}): SecretMatch[] {
  if (typeof text !== 'string') throw new TypeError('findSecrets: text must be a string');
  if (text.length === 0) return [];
  return scan(text, 0, true, compile(DEFAULT_RULES, secrets), []).masks.map((m) => ({ rule: m.rule, start: m.start, end: m.end }));
}

/**
 * Redacts every string inside a JSON-like value (objects, arrays), leaving the keys for which
 * `keep(key)` is true alone (ids, hashes, enum fields). Returns a new value; depth is capped at 32
 * (anything deeper is replaced by REDACTED rather than passed through unread).
 */
export function redactStrings<T>(value: T, redactor: Redactor, keep: (key: string) => boolean = () => false, onMask?: (m: MaskEvent) => void): T {
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return redactor.redact(v, onMask);
    if (v === null || typeof v !== 'object') return v;
    if (depth > 32) return '[redacted]';
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = keep(k) ? x : walk(x, depth + 1);
    return out;
  };
  return walk(value, 0) as T;
}
export { RedactionTally, type ReceiptEntry } from './receipt';
