/**
 * The org's secret values and the forms a program prints them in: raw, with CRLF line ends (a
 * terminal turns "\n" into "\r\n"), JSON-escaped, URL-encoded, base64 and base64url (padded and
 * not), and the characters of the value's base64 inside a longer base64 text (`user:secret` in
 * Basic auth, a secret inside a base64'd file) at each of the three byte alignments.
 */

/**
 * Values shorter than this are not masked: a 4-character value occurs by chance all over ordinary
 * output, masking it would garble terminals, and where the masks fall would tell a watcher the
 * value anyway.
 */
export const MIN_SECRET_LENGTH = 6;
/** Same bound as CreateSessionCommand.secrets values; it bounds the longest literal match (and the hold). */
export const MAX_SECRET_LENGTH = 10_000;
/** More secret values than this for one session is a bug upstream, not a configuration. */
export const MAX_SECRETS = 1_000;

/** Named values (receipts show the name, never the value), or bare values (named `secret-N`). */
export type SecretInput = Readonly<Record<string, string>> | readonly string[];

export interface NamedForm {
  form: string;
  name: string;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function base64(bytes: Uint8Array): string {
  let out = '';
  let k = 0;
  for (; k + 2 < bytes.length; k += 3) {
    const v = (bytes[k] << 16) | (bytes[k + 1] << 8) | bytes[k + 2];
    out += B64[v >> 18] + B64[(v >> 12) & 63] + B64[(v >> 6) & 63] + B64[v & 63];
  }
  const rest = bytes.length - k;
  if (rest === 1) {
    const v = bytes[k] << 16;
    out += B64[v >> 18] + B64[(v >> 12) & 63] + '==';
  } else if (rest === 2) {
    const v = (bytes[k] << 16) | (bytes[k + 1] << 8);
    out += B64[v >> 18] + B64[(v >> 12) & 63] + B64[(v >> 6) & 63] + '=';
  }
  return out;
}

const toUrlSafe = (b64: string) => b64.replace(/\+/g, '-').replace(/\//g, '_');

/** Every form of one value that is masked. Empty for values shorter than MIN_SECRET_LENGTH. */
export function secretForms(value: string): string[] {
  if (typeof value !== 'string') throw new TypeError('a secret value must be a string');
  if (value.length < MIN_SECRET_LENGTH) return [];
  const forms = new Set<string>([value]);
  if (value.includes('\n')) forms.add(value.replace(/\r?\n/g, '\r\n'));
  forms.add(JSON.stringify(value).slice(1, -1));
  forms.add(encodeURIComponent(value));
  forms.add(encodeURIComponent(value).replace(/%20/g, '+'));
  const bytes = new TextEncoder().encode(value);
  const n = bytes.length;
  for (let k = 0; k < 3; k++) {
    const shifted = new Uint8Array(k + n);
    shifted.set(bytes, k);
    const b = base64(shifted);
    if (k === 0) {
      for (const f of [b, b.replace(/=+$/, '')]) {
        forms.add(f);
        forms.add(toUrlSafe(f));
      }
    }
    // The characters wholly inside the value's bits [8k, 8k + 8n): the same whatever surrounds it.
    const inner = b.slice(Math.ceil((8 * k) / 6), Math.floor((8 * k + 8 * n) / 6));
    if (inner.length >= MIN_SECRET_LENGTH) {
      forms.add(inner);
      forms.add(toUrlSafe(inner));
    }
  }
  return [...forms].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/** Validates and names the input; throws TypeError/RangeError on bad input (nothing is half-built). */
export function namedSecrets(secrets: SecretInput | undefined): Array<{ name: string; value: string }> {
  if (secrets === undefined) return [];
  const entries: Array<[string, unknown]> = Array.isArray(secrets)
    ? secrets.map((v, k) => [`secret-${k + 1}`, v])
    : typeof secrets === 'object' && secrets !== null
      ? Object.entries(secrets)
      : (() => {
          throw new TypeError('secrets must be an object of name → value or an array of strings');
        })();
  if (entries.length > MAX_SECRETS) throw new RangeError(`at most ${MAX_SECRETS} secret values`);
  return entries.map(([name, value]) => {
    if (typeof value !== 'string') throw new TypeError('secret values must be strings');
    if (value.length > MAX_SECRET_LENGTH) throw new RangeError(`a secret value is longer than ${MAX_SECRET_LENGTH} characters`);
    return { name, value };
  });
}

/**
 * An org's secrets are compiled again for every session, every one-shot redact() and every test
 * stream: the forms of the last few sets are kept (by content, never by object: a caller may
 * change its object). Sets whose names and values are longer than FORMS_CACHE_KEY_MAX are not kept.
 */
const FORMS_CACHE_SIZE = 32;
const FORMS_CACHE_KEY_MAX = 64 * 1024;
const formsCache = new Map<string, Map<number, NamedForm[]>>();

/** Forms by their first char code, longest first (the longest match wins the receipt's name). Shared: never change it. */
export function compileForms(secrets: SecretInput | undefined): Map<number, NamedForm[]> {
  const named = namedSecrets(secrets);
  const key = JSON.stringify(named);
  const cached = formsCache.get(key);
  if (cached) return cached;
  const out = formsOf(named);
  if (key.length <= FORMS_CACHE_KEY_MAX) {
    formsCache.set(key, out);
    if (formsCache.size > FORMS_CACHE_SIZE) formsCache.delete(formsCache.keys().next().value!);
  }
  return out;
}

function formsOf(named: Array<{ name: string; value: string }>): Map<number, NamedForm[]> {
  const out = new Map<number, NamedForm[]>();
  for (const { name, value } of named) {
    for (const form of secretForms(value)) {
      const c = form.charCodeAt(0);
      const list = out.get(c) ?? [];
      if (!list.some((x) => x.form === form)) list.push({ form, name });
      out.set(c, list);
    }
  }
  for (const list of out.values()) list.sort((a, b) => b.form.length - a.form.length);
  return out;
}
