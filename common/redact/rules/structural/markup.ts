/**
 * Secrets in XML configuration: Maven's settings.xml `<password>…</password>`, NuGet's and .NET's
 * `<add key="ApiKey" value="…" />`. The element or key name is kept, the text or value masked.
 */
import * as C from '../../chars';
import type { Rule } from '../../rule';
import * as S from './shared';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call.
const { chars, FAIL, lit, NEED, NO, run, YES } = C;
const { fakePassword, more } = S;

/** Element names (lower case) whose text is a secret. */
const SECRET_ELEMENTS = ['password', 'passphrase', 'secret', 'token', 'apikey', 'api_key', 'privatekey', 'private_key', 'clientsecret', 'client_secret', 'secretkey', 'secret_key', 'accesskey', 'access_key', 'cleartextpassword'];
/** `<add key="…">` names (lower case) whose value is a secret: they end so. */
const SECRET_KEY_ENDINGS = ['password', 'passwd', 'secret', 'token', 'apikey', 'api_key', 'accesskey', 'secretkey', 'privatekey'];
const ELEMENT_TEXT = chars(`<\r\n${C.CONTROL}`, true);
const ATTRIBUTE = chars(`"\r\n${C.CONTROL}`, true);
const SPACES = chars(' \t');
const VALUE_MAX = 1024;
const KEY_MAX = 128;

export const xmlSecretRule: Rule = {
  name: 'xml-secret',
  provider: 'XML configuration (Maven, NuGet, .NET)',
  source: 'https://maven.apache.org/settings.html#servers',
  format: /<(password|passphrase|secret|token|apiKey|privateKey|clientSecret)>[^<\s]+<\/|<add\s+key="[^"]*(password|secret|token|apikey)"\s+value="[^"]+"/i,
  maxLength: VALUE_MAX,
  first: '<',
  notAfter: null,
  prefixes: ['<add key="', ...SECRET_ELEMENTS.map((e) => `<${e}>`)],
  prefixCi: true,
  example(r) {
    const secret = fakePassword(r);
    return r.pick([
      { text: `<server>\n  <id>nexus</id>\n  <username>deploy</username>\n  <password>${secret}</password>\n</server>`, secret },
      { text: `<add key="ClearTextPassword" value="${secret}" />`, secret },
      { text: `<add key="ApiKey" value="${secret}" />`, secret },
    ]);
  },
  match(s, i, final, f) {
    const add = lit(s, i, '<add key="', final, true);
    if (add === NEED) return more(f, s.length);
    if (add !== FAIL) {
      const ke = run(s, add, ATTRIBUTE, KEY_MAX, final);
      if (ke === NEED) return more(f, s.length);
      const key = s.slice(add, ke).toLowerCase();
      if (!SECRET_KEY_ENDINGS.some((k) => key.endsWith(k))) return NO;
      let j = lit(s, ke, '"', final);
      if (j === NEED) return more(f, s.length);
      if (j === FAIL) return NO;
      j = run(s, j, SPACES, 8, final);
      if (j === NEED) return more(f, s.length);
      const v = lit(s, j, 'value="', final, true);
      if (v === NEED) return more(f, s.length);
      if (v === FAIL) return NO;
      const e = run(s, v, ATTRIBUTE, VALUE_MAX, final);
      if (e === NEED) return more(f, v);
      return e > v ? found(f, v, e) : NO;
    }
    for (const name of SECRET_ELEMENTS) {
      const t = lit(s, i, `<${name}>`, final, true);
      if (t === NEED) return more(f, s.length);
      if (t === FAIL) continue;
      const e = run(s, t, ELEMENT_TEXT, VALUE_MAX, final);
      if (e === NEED) return more(f, t);
      // `<password>${env.PW}</password>` is a reference, not a secret.
      if (e === t || s.startsWith('${', t)) return NO;
      return found(f, t, e);
    }
    return NO;
  },
};

function found(f: { start: number; end: number }, start: number, end: number): C.Answer {
  f.start = start;
  f.end = end;
  return YES;
}
