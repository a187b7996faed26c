import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createRedactor,
  createStreamRedactor,
  findSecrets,
  MAX_SECRET_LENGTH,
  MIN_SECRET_LENGTH,
  redact,
  REDACTED,
  redactStrings,
  secretForms,
  TOKEN_RULE_NAMES,
} from './index';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const b64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

/** Feeds `text` to a stream redactor cut at `cuts` (sorted positions) and returns the concatenated output. */
function streamed(text: string, secrets: string[], cuts: number[]): string {
  const r = createStreamRedactor(secrets);
  let out = '';
  let at = 0;
  for (const c of [...cuts, text.length]) {
    if (c <= at) continue;
    out += r.push(text.slice(at, c));
    at = c;
  }
  return out + r.flush();
}
const everyChar = (text: string) => Array.from({ length: text.length }, (_, k) => k);

describe('redact: token formats (positive and negative)', () => {
  const cases: Array<[string, string, string]> = [
    // [rule, input, expected]
    ['github-token', `x ghp_${'a1B2'.repeat(9)} y`, `x ${REDACTED} y`],
    ['github-token', `gho_${'Z'.repeat(36)}`, REDACTED],
    ['github-token (too short)', `ghp_${'a'.repeat(20)}`, `ghp_${'a'.repeat(20)}`],
    ['github-token (inside a word)', `xghp_${'a'.repeat(36)}`, `xghp_${'a'.repeat(36)}`],
    ['github-pat', `github_pat_11ABCDEFG0_${'x'.repeat(59)}.`, `${REDACTED}.`],
    ['aws-access-key-id', 'key AKIAIOSFODNN7EXAMPLE,', `key ${REDACTED},`],
    ['aws-access-key-id (ASIA)', 'ASIAY34FZKBOKMUTVV7A', REDACTED],
    ['aws-access-key-id (17 chars: not one)', 'AKIAIOSFODNN7EXAMPLEX', 'AKIAIOSFODNN7EXAMPLEX'],
    ['aws secret', 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n', `aws_secret_access_key = ${REDACTED}\n`],
    ['aws secret (env)', 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG', `AWS_SECRET_ACCESS_KEY=${REDACTED}`],
    ['slack-token', 'xoxb-1234567890-0987654321-AbCdEf', REDACTED],
    ['slack-token (too short)', 'xoxb-12', 'xoxb-12'],
    ['slack-webhook', 'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX ok', `https://hooks.slack.com/services/${REDACTED} ok`],
    ['stripe-key', 'sk_live_4eC39HqLyjWDarjtT1zdp7dc', REDACTED],
    ['stripe-key (restricted, test)', 'rk_test_abcdefghij12 sk_test_ABCDEFGHIJ', `${REDACTED} ${REDACTED}`],
    ['openai-key', 'OPENAI sk-proj-Ab3dEf6hIj9kLmN0pQrStUvWxYz', `OPENAI ${REDACTED}`],
    ['openai-key (branch name: not one)', 'git checkout sk-some-feature-branch-name', 'git checkout sk-some-feature-branch-name'],
    ['anthropic-key', 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz_-', REDACTED],
    ['google-api-key', 'AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe', REDACTED],
    ['google-api-key (34 chars: not one)', 'AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQ', 'AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQ'],
    [
      'jwt',
      'Cookie: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U;',
      `Cookie: ${REDACTED};`,
    ],
    ['jwt (two segments: not one)', 'eyJhbGciOiJIUzI1NiJ9 only', 'eyJhbGciOiJIUzI1NiJ9 only'],
    [
      'pem-private-key',
      '$ cat id\r\n-----BEGIN OPENSSH PRIVATE KEY-----\r\nb3BlbnNzaC1rZXktdjEAAAAA\r\nQyNTUxOQAAACDx+/=\r\n-----END OPENSSH PRIVATE KEY-----\r\n$ ',
      `$ cat id\r\n${REDACTED}\r\n$ `,
    ],
    ['pem-private-key (truncated)', '-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nMIIEow\n$ x', `${REDACTED}$ x`],
    ['pem public key (not masked)', '-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----', '-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----'],
    ['url-credentials', 'remote https://bob:s3cr3t@github.com/x.git', `remote https://bob:${REDACTED}@github.com/x.git`],
    ['url-credentials (empty user)', 'redis://:pw0rd!@cache:6379', `redis://:${REDACTED}@cache:6379`],
    ['url with a port (not masked)', 'http://localhost:3000/x@y', 'http://localhost:3000/x@y'],
    ['secret-assignment', 'password=hunter2 --x', `password=${REDACTED} --x`],
    ['secret-assignment (quoted, spaces)', `DB_PASSWORD = "two words"`, `DB_PASSWORD = "${REDACTED}"`],
    ['secret-assignment (json)', '{"client_secret": "abc"}', `{"client_secret": "${REDACTED}"}`],
    ['secret-assignment (passwd:)', 'passwd: hunter2', `passwd: ${REDACTED}`],
    ['secret-assignment (flag, query)', 'cli --token=abc123 https://x/?api_key=k3y&b=1', `cli --token=${REDACTED} https://x/?api_key=${REDACTED}&b=1`],
    ['type annotation (not masked)', 'password: string; token: Token', 'password: string; token: Token'],
    ['error message (not masked)', 'cat: /etc/passwd: Permission denied', 'cat: /etc/passwd: Permission denied'],
    ['comparison (not masked)', 'if (token == x || password => y)', 'if (token == x || password => y)'],
    ['unset values (not masked)', 'secret: false token=null', 'secret: false token=null'],
    ['$PWD (not masked)', 'PWD=/home/me OLDPWD=/tmp max_tokens=4096', 'PWD=/home/me OLDPWD=/tmp max_tokens=4096'],
    ['bearer-token', 'curl -H "Authorization: Bearer abc123def456ghi789jkl0"', `curl -H "Authorization: Bearer ${REDACTED}"`],
    ['bearer prose (not masked)', 'the bearer of bad news', 'the bearer of bad news'],
    ['authorization-header', 'Authorization: Basic dXNlcjpwYXNzd29yZA==\r\n', `Authorization: Basic ${REDACTED}\r\n`],
    ['plain text', 'npm test\r\n  ✓ 12 tests passed (345 ms)\r\n', 'npm test\r\n  ✓ 12 tests passed (345 ms)\r\n'],
  ];
  it.each(cases)('%s', (_name, input, expected) => {
    expect(redact(input)).toBe(expected);
    expect(streamed(input, [], everyChar(input))).toBe(expected);
  });

  it('names its rules', () => {
    expect(TOKEN_RULE_NAMES).toEqual(
      expect.arrayContaining(['github-token', 'aws-access-key-id', 'slack-token', 'stripe-key', 'openai-key', 'anthropic-key', 'google-api-key', 'jwt', 'pem-private-key', 'url-credentials', 'secret-assignment']),
    );
  });

  it('is stable: redacting twice changes nothing more', () => {
    const t = `password=x1 ghp_${'a'.repeat(36)} https://u:p4ss@h`;
    expect(redact(redact(t))).toBe(redact(t));
  });
});

describe('redact: org secret values', () => {
  const secret = 'sv-abc123def456ghi';
  it('masks the value and its base64 forms (standard, url-safe, with and without padding)', () => {
    const weird = 'pä?s>w~rd/1';
    for (const form of [secret, b64(secret), b64url(secret), b64(weird), b64url(weird), b64(weird).replace(/=+$/, '')]) {
      expect(redact(`[${form}]`, [secret, weird])).toBe(`[${REDACTED}]`);
    }
  });

  it('masks the value inside longer base64 (Basic auth) at every byte alignment', () => {
    for (const prefix of ['', 'u:', 'us:', 'use:']) {
      const out = redact(`Basic ${b64(`${prefix}${secret}!`)}`, [secret]);
      expect(out).toContain(REDACTED);
      expect(out).not.toContain(b64(secret).slice(4, 12));
    }
  });

  it('masks a multi-line value as the terminal prints it (CRLF)', () => {
    expect(redact('a\r\nline1\r\nline2\r\nz', ['line1\nline2'])).toBe(`a\r\n${REDACTED}\r\nz`);
  });

  it(`ignores values shorter than ${MIN_SECRET_LENGTH} characters`, () => {
    expect(secretForms('12345')).toEqual([]);
    expect(redact('pin 12345', ['12345'])).toBe('pin 12345');
  });

  it('masks a secret that starts inside another match to its end (union of matches)', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc';
    const out = redact(`${jwt}XYZ-secret-tail!`, ['abcXYZ-secret-tail']);
    expect(out).toBe(`${REDACTED}!`);
  });

  it('merges overlapping and adjacent matches into one marker', () => {
    expect(redact('..abcdefghij..', ['abcdefgh', 'efghij'])).toBe(`..${REDACTED}..`);
    expect(redact('..abcdef123456..', ['abcdef', '123456'])).toBe(`..${REDACTED}..`);
  });

  it('validates its inputs', () => {
    expect(() => redact(42 as unknown as string)).toThrow(TypeError);
    expect(() => createRedactor([1 as unknown as string])).toThrow(TypeError);
    expect(() => createRedactor('abc' as unknown as string[])).toThrow(TypeError);
    expect(() => createRedactor(['x'.repeat(MAX_SECRET_LENGTH + 1)])).toThrow(RangeError);
    expect(() => createStreamRedactor([], { maxHoldChars: 0 })).toThrow(RangeError);
    expect(() => createStreamRedactor([]).push(null as unknown as string)).toThrow(TypeError);
  });

  it('redactStrings walks objects and arrays and leaves kept keys alone', () => {
    const r = createRedactor([secret]);
    const v = { type: 'X', command: `echo ${secret}`, context: { argv: ['a', secret], command_hash: secret, n: 3 } };
    expect(redactStrings(v, r, (k) => k === 'type' || k === 'command_hash')).toEqual({
      type: 'X',
      command: `echo ${REDACTED}`,
      context: { argv: ['a', REDACTED], command_hash: secret, n: 3 },
    });
  });
});

describe('stream redactor', () => {
  it('holds back only a tail that could still become a match', () => {
    const r = createStreamRedactor(['sv-abc123def456ghi']);
    expect(r.push('total 0\r\n$ ')).toBe('total 0\r\n$ ');
    expect(r.pending).toBe(0);
    expect(r.push('echo sv-abc')).toBe('echo ');
    expect(r.pending).toBe('sv-abc'.length);
    expect(r.push('123def456ghi\r\n')).toBe(`${REDACTED}\r\n`);
    expect(r.flush()).toBe('');
  });

  it('holds a PEM block until its END line, then masks it whole', () => {
    const r = createStreamRedactor();
    let out = r.push('-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n');
    expect(out).toBe('');
    out += r.push('oAoGCCqG\n-----END EC PRIVATE KEY-----\n$ ');
    expect(out).toBe(`${REDACTED}\n$ `);
  });

  it('flush() releases the tail as if the text ended (a secret split by a longer pause is not caught)', () => {
    const r = createStreamRedactor(['sv-abc123def456ghi']);
    const out = r.push('sv-abc123') + r.flush() + r.push('def456ghi') + r.flush();
    expect(out).toBe('sv-abc123def456ghi');
  });

  it('caps the hold: a contrived endless chain of overlapping matches is cut at maxHoldChars', () => {
    const r = createStreamRedactor(['aaaaaa'], { maxHoldChars: 100 });
    let out = '';
    for (let k = 0; k < 10; k++) out += r.push('a'.repeat(50));
    expect(r.pending).toBeLessThanOrEqual(100);
    out += r.flush();
    expect(out).not.toContain('aaaaaa');
  });
});

// ---- property tests ----

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const from = (alphabet: string, min: number, max: number) =>
  fc.array(fc.constantFrom(...alphabet), { minLength: min, maxLength: max }).map((a) => a.join(''));

/** Each generator yields [the text to embed, the part that must not survive]. */
const token: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.tuple(fc.constantFrom('ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'), from(ALNUM, 36, 40)).map(([p, b]): [string, string] => [p + b, p + b]),
  from(`${ALNUM}_`, 22, 82).map((b): [string, string] => [`github_pat_${b}`, `github_pat_${b}`]),
  fc.tuple(fc.constantFrom('AKIA', 'ASIA'), from('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16, 16)).map(([p, b]): [string, string] => [p + b, p + b]),
  fc.tuple(fc.constantFrom('xoxb-', 'xoxp-', 'xoxa-'), from(`${ALNUM}-`, 10, 40)).map(([p, b]): [string, string] => [p + b, p + b]),
  from(ALNUM, 20, 30).map((b): [string, string] => [`https://hooks.slack.com/services/T0/${b}`, b]),
  fc.tuple(fc.constantFrom('sk_live_', 'rk_live_', 'sk_test_'), from(ALNUM, 24, 30)).map(([p, b]): [string, string] => [p + b, p + b]),
  from(`${ALNUM}_-`, 30, 60).map((b): [string, string] => [`sk-proj-A1${b}`, `sk-proj-A1${b}`]),
  from(`${ALNUM}_-`, 30, 60).map((b): [string, string] => [`sk-ant-api03-${b}`, `sk-ant-api03-${b}`]),
  from(`${ALNUM}_-`, 35, 35).map((b): [string, string] => [`AIza${b}`, `AIza${b}`]),
  fc.tuple(from(`${ALNUM}_-`, 10, 30), from(`${ALNUM}_-`, 10, 40), from(`${ALNUM}_-`, 10, 40)).map(([a, b, c]): [string, string] => [`eyJ${a}.${b}.${c}`, `eyJ${a}.${b}.${c}`]),
  fc.tuple(fc.constantFrom('RSA ', 'EC ', 'OPENSSH ', ''), fc.array(from(`${ALNUM}+/`, 8, 64), { minLength: 1, maxLength: 4 }), fc.constantFrom('\n', '\r\n')).map(
    ([label, lines, nl]): [string, string] => [`-----BEGIN ${label}PRIVATE KEY-----${nl}${lines.join(nl)}${nl}-----END ${label}PRIVATE KEY-----`, lines.join(nl)],
  ),
  fc.tuple(fc.constantFrom('https', 'postgres', 'redis'), from(ALNUM, 0, 8), from(`${ALNUM}!%*`, 8, 20)).map(([scheme, user, pw]): [string, string] => [`${scheme}://${user}:${pw}@host/db`, pw]),
  fc.tuple(fc.constantFrom('password', 'DB_PASSWORD', 'client_secret', 'api_key', 'GITHUB_TOKEN', 'passwd'), fc.constantFrom('=', ': ', ' = '), from(`${ALNUM}!%*`, 8, 20)).map(
    ([key, sep, v]): [string, string] => [`${key}${sep}${v}1`, `${v}1`],
  ),
  from(`${ALNUM}._~+/-`, 20, 40).map((t): [string, string] => [`Authorization: Bearer 9${t}`, `9${t}`]),
);

/** Org secret values (no brackets, so the marker cannot be mistaken for one). */
const secretValue = from(`${ALNUM}-_.!@#`, MIN_SECRET_LENGTH, 24);
const filler = fc.oneof(from(`${ALNUM} \r\n=:-_./'"`, 0, 30), fc.string({ maxLength: 20 }), fc.constantFrom('password', 'sk-', 'ghp_', 'eyJ', '-----BEGIN ', 'https://', 'AKIA', 'xox'));
const separator = fc.constantFrom(' ', '\n', '\r\n', '\t', ', ', '"');

interface Doc {
  text: string;
  secrets: string[];
  /** Substrings that must not appear in the output. */
  mustNotSurvive: string[];
  /** Where each embedded secret sits (to cut inside every one). */
  spans: Array<[number, number]>;
}

const doc: fc.Arbitrary<Doc> = fc
  .tuple(
    fc.array(secretValue, { minLength: 0, maxLength: 3 }),
    fc.array(fc.tuple(filler, fc.oneof(token, fc.nat(2).map((k) => ['secret', k] as const)), separator), { minLength: 1, maxLength: 8 }),
    fc.constantFrom('', 'b64', 'b64url'),
  )
  .map(([secrets, parts, encoding]) => {
    let text = '';
    const mustNotSurvive: string[] = [];
    const spans: Array<[number, number]> = [];
    for (const [fill, item, sep] of parts) {
      text += `${fill}${sep}`;
      let embed: string;
      if (item[0] === 'secret') {
        if (secrets.length === 0) continue;
        const value = secrets[(item[1] as number) % secrets.length];
        embed = encoding === 'b64' ? b64(value) : encoding === 'b64url' ? b64url(value) : value;
        mustNotSurvive.push(embed.replace(/=+$/, ''));
      } else {
        embed = item[0] as string;
        mustNotSurvive.push(item[1] as string);
      }
      spans.push([text.length, text.length + embed.length]);
      text += `${embed}${sep}`;
    }
    return { text, secrets, mustNotSurvive, spans };
  });

const chunking = (text: string) =>
  fc.oneof(
    fc.array(fc.nat(Math.max(0, text.length)), { maxLength: 30 }).map((cuts) => [...new Set(cuts)].sort((a, b) => a - b)),
    fc.constant(everyChar(text)),
  );

describe('stream redactor: properties', () => {
  it('for random chunkings, concat(push…, flush) === redact(concat), and no secret or token survives', () => {
    fc.assert(
      fc.property(
        doc.chain((d) => fc.tuple(fc.constant(d), chunking(d.text))),
        ([d, cuts]) => {
          const whole = redact(d.text, d.secrets);
          expect(streamed(d.text, d.secrets, cuts)).toBe(whole);
          // Cut inside every embedded secret/token too.
          const inside = d.spans.flatMap(([a, b]) => [a + 1, Math.floor((a + b) / 2), b - 1]).sort((x, y) => x - y);
          expect(streamed(d.text, d.secrets, inside)).toBe(whole);
          for (const s of d.mustNotSurvive) expect(whole).not.toContain(s);
          for (const s of d.secrets) expect(whole).not.toContain(s);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('holds for arbitrary unicode text and overlapping secrets', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 80 }),
        fc.array(fc.string({ unit: 'grapheme', minLength: 6, maxLength: 10 }), { maxLength: 3 }),
        fc.array(fc.nat(200), { maxLength: 20 }),
        (text, secrets, cuts) => {
          const t = secrets.length ? `${text}${secrets[0]}${secrets[0].slice(2)}${text}` : text;
          const sorted = [...new Set(cuts)].sort((a, b) => a - b);
          expect(streamed(t, secrets, sorted)).toBe(redact(t, secrets));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('holds with 1-character chunks for adjacent and overlapping matches of different rules', () => {
    const secrets = ['abcdef123456', '123456ghijkl', 'XYZ-secret-tail'];
    const texts = [
      'abcdef123456ghijkl',
      'password=abcdef123456 https://u:abcdef123456@h',
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcXYZ-secret-tail!',
      `ghp_${'a'.repeat(36)}abcdef123456`,
      'Authorization: Bearer 0123456789abcdef0123abcdef123456 token=x1',
      '-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----abcdef123456',
      'sk-ant-sk-ant-sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaa',
    ];
    for (const t of texts) expect(streamed(t, secrets, everyChar(t))).toBe(redact(t, secrets));
  });
});

describe('findSecrets (the patrols\' secret scan)', () => {
  it('names the rule of each stretch it would mask', () => {
    const text = `token ghp_${'a1B2'.repeat(9)} and password=hunter22 and the value s3cr3t-value`;
    const found = findSecrets(text, ['s3cr3t-value']).map((m) => ({ rule: m.rule, text: text.slice(m.start, m.end) }));
    expect(found).toEqual([
      { rule: 'github-token', text: `ghp_${'a1B2'.repeat(9)}` },
      { rule: 'secret-assignment', text: 'hunter22' },
      { rule: 'secret-value', text: 's3cr3t-value' },
    ]);
    expect(findSecrets('nothing to see here')).toEqual([]);
  });

  it('finds something exactly when the redaction changes the text', () => {
    fc.assert(
      fc.property(doc, (d) => {
        expect(findSecrets(d.text, d.secrets).length > 0).toBe(redact(d.text, d.secrets) !== d.text);
      }),
      { numRuns: 300 },
    );
  });
});
