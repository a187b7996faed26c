import { findSecrets, REDACTED } from '../../../common/redact';
import type { CheckFinding } from './types';

/**
 * The security check, offline: every tracked text file is scanned line by line with the patterns
 * the terminal redaction uses (common/redact `findSecrets`: GitHub, AWS, Slack, Stripe,
 * OpenAI, Anthropic and Google keys, JWTs, PEM private keys, credentials in URLs, `password=`-
 * style assignments, Bearer and Authorization headers). The report names the rule and shows the
 * line with the value masked, never the value.
 *
 * The assignment rule is meant for terminal text; in source code `token = randomBytes(32)` or
 * `password: string` are not secrets. So an assignment counts only when its value is a literal:
 * no spaces, no code punctuation, no `$`/`<`/`{` placeholder. Every other rule counts as it is.
 * A line that must stay (a documented example, a test fixture) carries ALLOW_MARKER.
 */

export const ALLOW_MARKER = 'av-check: allow-secret';
/** Bigger files are skipped (generated bundles, data), and so are files with a NUL byte (binary). */
export const MAX_SCAN_BYTES = 1024 * 1024;
/** Minified one-line files would make one huge excerpt; lines are scanned up to this length. */
const MAX_LINE_CHARS = 20_000;
const EXCERPT_CHARS = 160;

export interface SecretsInput {
  files: readonly string[];
  /** The file's bytes, or null if it cannot be read. */
  read(path: string): Buffer | null;
}

/** An unquoted `user.password` or `opts.token` in code names a variable; in a .env or .ini file it is the value. */
const IDENTIFIER_CHAIN = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/;
const CONFIG_FILE = /(^|\/)(\.env[^/]*|[^/]+\.(env|ini|cfg|conf|properties|toml|ya?ml|json))$/;

/** The value of a `key = value` match reads like data rather than code. */
function literalValue(line: string, start: number, end: number, file: string): boolean {
  const value = line.slice(start, end);
  const quoted = start > 0 && `'"\``.includes(line[start - 1]!);
  if (value.length < 6 || /[\s()[\]{},;]/.test(value) || /^[$<{%]/.test(value) || /^process\.env\b/.test(value)) return false;
  return quoted || CONFIG_FILE.test(file) || !IDENTIFIER_CHAIN.test(value);
}

function mask(line: string, stretches: Array<[number, number]>): string {
  let out = '';
  let at = 0;
  for (const [s, e] of [...stretches].sort((a, b) => a[0] - b[0])) {
    if (e <= at) continue;
    out += line.slice(at, Math.max(at, s)) + REDACTED;
    at = e;
  }
  return out + line.slice(at);
}

export function scanSecrets(input: SecretsInput): { findings: CheckFinding[]; scanned: number; skipped: number } {
  const findings: CheckFinding[] = [];
  let scanned = 0;
  let skipped = 0;
  for (const file of input.files) {
    const bytes = input.read(file);
    if (!bytes || bytes.length > MAX_SCAN_BYTES || bytes.subarray(0, 8192).includes(0)) {
      skipped++;
      continue;
    }
    scanned++;
    bytes
      .toString('utf8')
      .split('\n')
      .forEach((raw, i) => {
        const line = raw.length > MAX_LINE_CHARS ? raw.slice(0, MAX_LINE_CHARS) : raw;
        if (line.includes(ALLOW_MARKER)) return;
        const matches = findSecrets(line);
        if (!matches.length) return;
        const counted = matches.filter((m) => m.rule !== 'secret-assignment' || literalValue(line, m.start, m.end, file));
        if (!counted.length) return;
        const shown = mask(line, matches.map((m) => [m.start, m.end])).trim();
        const rules = [...new Set(counted.map((m) => m.rule))].join(', ');
        findings.push({
          path: file,
          line: i + 1,
          severity: 'error',
          message: `possible secret (${rules}): ${shown.length > EXCERPT_CHARS ? `${shown.slice(0, EXCERPT_CHARS - 1)}…` : shown}`,
        });
      });
  }
  return { findings, scanned, skipped };
}
