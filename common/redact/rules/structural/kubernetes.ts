/**
 * A Kubernetes Secret's values, whatever their keys are called: the entries of a `data:` block
 * (base64) or a `stringData:` block (plain, block scalars included) in a manifest, in `kubectl get
 * secret -o yaml` (which prints `data:` before `kind: Secret`) and in `-o json` (`"data": {`).
 * Asked at those headers only (`data` found by indexOf); the block is read to its
 * end and masked from its first value to its last, keys between included: a rule masks one
 * stretch, and asking at every indented line instead cost every YAML and JSON output a step per
 * key (3 ms per MB of JSON). A `data:` block with a value that is not base64 is some other
 * `data:` (a ConfigMap's, an API response's) and is left alone.
 */
import * as C from '../../chars';
import type { Rule } from '../../rule';
import * as S from './shared';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call.
const { chars, lit, NEED, NO, peek, run, YES } = C;
const { LINE_REST, QUOTED_VALUE, fakePassword, more } = S;

const SPACES = chars(' ');
const LINE_END = chars('\r\n');
/** A Secret's keys: `[-._a-zA-Z0-9]+`. */
const KEY = chars('A-Za-z0-9._-');
const KEY_MAX = 253;
const B64_CHAR = chars('A-Za-z0-9+/=');
const QUOTE = 34;
/** A block longer than this is masked up to here (a Secret holds at most 1 MB; most a few KB). */
const BLOCK_MAX = 32 * 1024;
/** base64 of fewer than 6 bytes is not taken for a Secret's value (a ConfigMap's word reads as base64 too). */
const B64_MIN = 8;
/** base64 of binary (a keystore, raw key bytes) counts from 32 bytes on. */
const BINARY_MIN = 44;
const HEADERS = ['data:', 'stringData:', '"data":', '"stringData":'];
const QUOTES = chars('"');
const STRING_ = chars('"strin');
const AFTER = chars(':"');

/** Whether s[from, to) is strict base64 of text (or of 32+ bytes of anything): what a Secret's `data` holds. */
function secretBase64(s: string, from: number, to: number): boolean {
  const n = to - from;
  if (n < B64_MIN || n % 4 !== 0) return false;
  let pad = 0;
  for (let k = from; k < to; k++) {
    const c = s.charCodeAt(k);
    if (c === 61) pad++;
    else if (pad > 0 || !B64_CHAR.has(c)) return false;
  }
  if (pad > 2) return false;
  if (n >= BINARY_MIN) return true;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(atob(s.slice(from, to)), (ch) => ch.charCodeAt(0)));
  } catch {
    return false;
  }
  return !/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(text);
}

/** Where the line break ending the line from j is followed by the next line (NEED; s.length at a final end). */
function nextLine(s: string, j: number, final: boolean): number {
  const e = run(s, j, LINE_REST, BLOCK_MAX, final);
  if (e === NEED) return NEED;
  const n = run(s, e, LINE_END, 2, final);
  return n === NEED ? NEED : n;
}

export const kubernetesSecretRule: Rule = {
  name: 'kubernetes-secret-data',
  provider: 'Kubernetes',
  source: 'https://kubernetes.io/docs/concepts/configuration/secret/',
  format: /(^|\n) *"?(data|stringData)"? *: *\{?\r?\n( +)"?[A-Za-z0-9._-]+"? *: *"?[^\s"]+/,
  maxLength: BLOCK_MAX,
  first: 'ds"',
  notAfter: chars(' \n', true),
  // `data` and `Data` (of stringData) followed by `:` or `"`: indexOf passes whose first letters
  // are rarer than `"` (searching `"data":` cost 0.5 ms per MB of JSON). The rule starts at the
  // header (`d`, `s`) or at its JSON quote.
  anchors: [
    { text: 'data', self: true, over: KEY, next: AFTER, reach: 5 },
    { text: 'data', over: QUOTES, back: 1, next: AFTER, reach: 6 },
    { text: 'Data', over: STRING_, back: 7, next: AFTER, reach: 12 },
  ],
  example(r) {
    const secret = btoa(fakePassword(r, 12 + r.int(12)));
    const key = r.pick(['username', 'DATABASE_URL', 'config.json', 'smtp-login', 'ca.key']);
    const text = r.pick([
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque\ndata:\n  ${key}: ${secret}\n`,
      `apiVersion: v1\ndata:\n  other: ${btoa('not-shown-either')}\n  ${key}: ${secret}\nkind: Secret\n`,
      `{\n    "apiVersion": "v1",\n    "data": {\n        "${key}": "${secret}"\n    },\n    "kind": "Secret"\n}\n`,
    ]);
    return { text, secret };
  },
  match(s, i, final, f) {
    // The header starts its line, after its indentation.
    const h = i;
    let ls = h;
    while (ls > 0 && s.charCodeAt(ls - 1) === 32) ls--;
    if (ls > 0 && s.charCodeAt(ls - 1) !== 10) return NO;
    const indent = h - ls;
    const json = s.charCodeAt(h) === QUOTE;
    let j = -1;
    let plain = false;
    for (const header of HEADERS) {
      const e = lit(s, h, header, final);
      if (e === NEED) return more(f, s.length);
      if (e >= 0) {
        j = e;
        plain = header.includes('stringData');
      }
    }
    if (j < 0) return NO;
    j = run(s, j, SPACES, 9, final);
    if (j === NEED) return more(f, s.length);
    if (json) {
      j = lit(s, j, '{', final);
      if (j === NEED) return more(f, s.length);
      if (j < 0) return NO;
    }
    const eol = run(s, j, LINE_END, 2, final);
    if (eol === NEED) return more(f, s.length);
    if (eol === j) return NO;
    return block(s, eol, indent, json, plain, final, f);
  },
};

/**
 * The entries from p (the line after the header) up to the first line indented no deeper than the
 * header: masked from the first value to the last. Each entry is `key: value` (JSON: `"key":
 * "value",`) at the first entry's indentation; deeper lines continue a stringData block scalar.
 */
function block(s: string, p: number, indent: number, json: boolean, plain: boolean, final: boolean, f: Parameters<Rule['match']>[3]): C.Answer {
  let first = -1;
  let last = -1;
  let entryIndent = -1;
  for (;;) {
    if (first >= 0 && p - first > BLOCK_MAX) break;
    const ie = run(s, p, SPACES, 64, final);
    if (ie === NEED) return more(f, first >= 0 ? first : s.length);
    const c = peek(s, ie, final);
    if (c === NEED) return more(f, first >= 0 ? first : s.length);
    const depth = ie - p;
    if (c === -1 || c === 13 || c === 10 || depth <= indent) break; // the block ends
    // A line indented less than the entries (not valid YAML, but printed) ends the block too.
    if (entryIndent >= 0 && depth < entryIndent) break;
    if (entryIndent >= 0 && depth > entryIndent) {
      // A block scalar's line (stringData `config.yaml: |`): part of the value; in `data` the block ends.
      if (!plain || json) break;
      const e = run(s, ie, LINE_REST, BLOCK_MAX, final);
      if (e === NEED) return more(f, first >= 0 ? first : ie);
      last = e;
      p = run(s, e, LINE_END, 2, final);
      if (p === NEED) return more(f, first >= 0 ? first : ie);
      continue;
    }
    entryIndent = depth;
    // The key.
    let k = json ? lit(s, ie, '"', final) : ie;
    if (k === NEED) return more(f, first >= 0 ? first : s.length);
    if (k < 0) return NO;
    const ke = run(s, k, KEY, KEY_MAX + 1, final);
    if (ke === NEED) return more(f, first >= 0 ? first : s.length);
    if (ke === k || ke - k > KEY_MAX) return NO;
    k = json ? lit(s, ke, '":', final) : lit(s, ke, ':', final);
    if (k === NEED) return more(f, first >= 0 ? first : s.length);
    if (k < 0) return NO;
    const vs0 = run(s, k, SPACES, 9, final);
    if (vs0 === NEED) return more(f, first >= 0 ? first : s.length);
    const q = peek(s, vs0, final);
    if (q === NEED) return more(f, first >= 0 ? first : vs0);
    const quote = q === QUOTE || q === 39 ? QUOTED_VALUE.get(q) : undefined;
    if (json && !quote) return NO;
    const vs = quote ? vs0 + 1 : vs0;
    const ve = run(s, vs, quote ?? LINE_REST, BLOCK_MAX, final);
    if (ve === NEED) return more(f, first >= 0 ? first : vs);
    if (quote) {
      // The closing quote ends the value on its line.
      const cq = peek(s, ve, final);
      if (cq === NEED) return more(f, first >= 0 ? first : vs);
      if (cq !== q) return NO;
    }
    // `data` values are base64; stringData values anything (a `|` or `>` starts a block scalar).
    let vEnd = ve;
    if (!plain) {
      if (!quote) while (vEnd > vs && (s.charCodeAt(vEnd - 1) === 32 || s.charCodeAt(vEnd - 1) === 13)) vEnd--;
      if (!secretBase64(s, vs, vEnd)) return NO;
    }
    if (vEnd > vs) {
      if (first < 0) first = vs;
      last = vEnd;
    }
    const n = nextLine(s, quote ? ve + 1 : ve, final);
    if (n === NEED) return more(f, first >= 0 ? first : vs);
    if (n === s.length && final) break;
    p = n;
  }
  if (first < 0) return NO;
  f.start = first;
  f.end = last;
  return YES;
}
