/**
 * The verifier's own answer to "can this file hold a link to one of these hosts?", written apart
 * from the adapter's prefilter (adapters/link-updater/measure.ts) so a mistake there is not
 * repeated here. The parsers match a link when its *decoded* URL, lowercased, starts with a host
 * prefix. The bytes of a file can spell a URL otherwise only through a character reference (`&`),
 * a backslash escape (`\`), or the two non-ASCII letters whose lowercase is ASCII (U+212A KELVIN
 * SIGN, U+0130 LATIN CAPITAL LETTER I WITH DOT ABOVE). A file with none of those and no prefix,
 * compared ASCII case-insensitively, has no such link: 0 of them, provably, without a parser.
 */
const ESCAPES = ['&', '\\', '\u212a', '\u0130'];

function asciiOnly(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** A matcher for a set of host prefixes; hosts written with non-ASCII letters always match. */
export function hostBytesMatcher(hosts: readonly string[]): (text: string) => boolean {
  const prefixes = hosts.map((h) => h.replace(/\/+$/, ''));
  if (prefixes.some((p) => !asciiOnly(p))) return () => true;
  // Without the u flag, /i folds ASCII letters only with each other: exactly toLowerCase on ASCII.
  const re = prefixes.length ? new RegExp(prefixes.map(escapeRegExp).join('|'), 'i') : null;
  return (text) => ESCAPES.some((c) => text.includes(c)) || (re !== null && re.test(text));
}
