import { describe, expect, it } from 'vitest';
import { buildCorpus, leaked, seeded } from './corpus';
import {
  createRedactor,
  createStreamRedactor,
  DEFAULT_RULES,
  findSecrets,
  MAX_SECRET_LENGTH,
  MIN_SECRET_LENGTH,
  redact,
  REDACTED,
  redactStrings,
  secretForms,
  TOKEN_RULE_NAMES,
  type MaskEvent,
} from './index';
import { everyChar, streamed } from './testing';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const corpus = buildCorpus(10);

describe('rules are data', () => {
  it('every rule has a unique name, a provider, a documented format, a source link and a max length', () => {
    expect(new Set(TOKEN_RULE_NAMES).size).toBe(DEFAULT_RULES.length);
    for (const rule of DEFAULT_RULES) {
      expect(rule.provider, rule.name).toMatch(/\S/);
      expect(rule.source, rule.name).toMatch(/^https:\/\//);
      expect(rule.format, rule.name).toBeInstanceOf(RegExp);
      expect(rule.maxLength, rule.name).toBeGreaterThan(0);
    }
  });

  it('covers the providers the issue lists', () => {
    const providers = new Set(DEFAULT_RULES.map((r) => r.provider));
    for (const p of ['GitHub', 'GitLab', 'AWS', 'Google', 'Azure', 'Slack', 'Stripe', 'OpenAI', 'Anthropic', 'Hugging Face', 'npm', 'PyPI', 'Twilio', 'SendGrid', 'Mailgun', 'Heroku', 'DigitalOcean', 'Discord', 'Telegram', 'Shopify', 'Square', 'Sentry', 'New Relic', 'Grafana', 'Linear', 'Doppler', 'HashiCorp Vault', 'age', 'Postman', 'Pulumi', 'Supabase', 'Databricks', 'Replicate', 'Groq', 'Cloudflare', 'xAI', 'Perplexity', 'OpenRouter', 'Atlassian', 'HashiCorp Terraform', 'Fly.io', 'PlanetScale', 'Okta', 'Docker', 'Tailscale', 'Notion', 'Figma', 'Dropbox', 'Asana', 'Airtable', '1Password', 'Meta', 'JFrog Artifactory', 'JSON Web Token', 'PEM / OpenSSH / OpenPGP', 'URLs', 'HTTP', '.netrc', 'PostgreSQL', 'command lines']) {
      expect(providers, p).toContain(p);
    }
    // Formats without a prefix of their own are found by their label, in the files they live in.
    const contexts = new Set(corpus.cases.map((c) => c.what));
    for (const c of ['aws-credentials-file', 'aws-session-token', 'google-service-account', 'azure-connection-string', 'npmrc', 'docker-config', 'kubeconfig', 'datadog', 'cloudflare', 'twilio', 'heroku-legacy', 'pgpass', 'netrc', 'mysql-cli']) {
      expect(contexts, c).toContain(c);
    }
  });

  it('every generated example matches its documented format and is masked, in one write and byte by byte (wholeOnly: in one push)', () => {
    const r = seeded(7);
    for (const rule of DEFAULT_RULES) {
      for (let k = 0; k < 10; k++) {
        const ex = rule.example(r);
        expect(ex.text, rule.name).toMatch(rule.format);
        const text = `${ex.text}\n`;
        // A wholeOnly rule masks a value that reaches it whole (rule.ts): in one write and one push.
        for (const out of [redact(text), streamed(text, {}, rule.wholeOnly ? [] : everyChar(text))]) {
          expect(out, `${rule.name}: ${ex.text}`).not.toContain(ex.secret);
          expect(out).toContain(REDACTED);
        }
      }
    }
  });

  it('keeps the label and masks the value', () => {
    expect(redact(`export GITHUB_TOKEN=ghp_${'a1B2'.repeat(9)}\n`)).toBe(`export GITHUB_TOKEN=${REDACTED}\n`);
    expect(redact(`x ghp_${'a1B2'.repeat(9)} y`)).toBe(`x ghp_${REDACTED} y`);
    expect(redact('postgres://app:hunter2hunter2@db:5432/x')).toBe(`postgres://app:${REDACTED}@db:5432/x`);
    expect(redact('"password": "s3cr3t!",')).toBe(`"password": "${REDACTED}",`);
  });
});

describe('terminal-aware', () => {
  const tok = `ghp_${'Zy9X'.repeat(9)}`;
  it('a token wrapped in reverse video is masked and the escape sequences are kept', () => {
    const text = `\x1b[7m${tok}\x1b[27m\r\n`;
    for (const out of [redact(text), streamed(text, {}, everyChar(text))]) expect(out).toBe(`\x1b[7mghp_${REDACTED}\x1b[27m\r\n`);
  });
  it('a token right after a colour code that follows a letter, cut by a colour change, after \\r and erase-line, or a cursor move', () => {
    for (const text of [
      `WARN\x1b[33m${tok}\x1b[0m\r\n`,
      `${tok.slice(0, 10)}\x1b[31m${tok.slice(10)}\x1b[0m\r\n`,
      `\r\x1b[K${tok}\r\n`,
      `abc\x1b[12G${tok}\r\n`,
    ]) {
      const out = streamed(text, {}, everyChar(text));
      expect(out, JSON.stringify(text)).not.toContain(tok.slice(4, 20));
      expect(out.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '')).toContain(REDACTED);
    }
  });
  it('an OSC 8 hyperlink target with a password is masked inside the sequence', () => {
    const text = '\x1b]8;;https://u:pa55w0rd-x@host/\x1b\\link\x1b]8;;\x1b\\\r\n';
    expect(streamed(text, {}, everyChar(text))).toBe(`\x1b]8;;https://u:${REDACTED}@host/\x1b\\link\x1b]8;;\x1b\\\r\n`);
  });
});

describe('stream: held only while undecided, never on a timer', () => {
  it('text that cannot start a secret passes at once, key by key', () => {
    const s = createStreamRedactor();
    for (const ch of 'git status && ls -la src/\r\n') expect(s.push(ch)).toBe(ch);
    expect(s.pending).toBe(0);
  });
  it('a value is held until the next bytes decide it; nothing else releases it', () => {
    const s = createStreamRedactor();
    expect(s.push('export TOKEN=ab')).toBe('export TOKEN=');
    expect(s.pending).toBe(2);
    expect(s.push('c9')).toBe('');
    expect(s.push('X\r\n')).toBe(`${REDACTED}\r\n`);
  });
  it('a candidate reaching its maximum length is masked, not released', () => {
    const s = createStreamRedactor();
    const out = s.push(`AKIA${'Q'.repeat(16)}`) + s.push(`QQQ\r\n`);
    expect(out).toBe(`AKIA${REDACTED}QQQ\r\n`);
  });
  it('end() masks a candidate that is still undecided, and releases everything else', () => {
    const s = createStreamRedactor();
    expect(s.push('$ export TOKEN=hunt')).toBe('$ export TOKEN=');
    expect(s.end()).toBe(REDACTED);
    const t = createStreamRedactor();
    expect(t.push('logout')).toBe('logout');
    expect(t.end()).toBe('');
  });
  it('a private-key block printed line by line is held until its END line', () => {
    const body = Array.from({ length: 3 }, (_, k) => `${'QUJD'.repeat(15)}${k}x`).join('\r\n');
    const s = createStreamRedactor();
    let out = s.push('-----BEGIN RSA PRIVATE KEY-----\r\n');
    for (const line of body.split('\r\n')) out += s.push(`${line}\r\n`);
    expect(out).toBe('-----BEGIN RSA PRIVATE KEY-----');
    out += s.push('-----END RSA PRIVATE KEY-----\r\n');
    expect(out).toBe(`-----BEGIN RSA PRIVATE KEY-----${REDACTED}-----END RSA PRIVATE KEY-----\r\n`);
  });
  it('validates its input', () => {
    expect(() => createStreamRedactor(DEFAULT_RULES, { A: 5 as unknown as string })).toThrow(TypeError);
    expect(() => createStreamRedactor(DEFAULT_RULES, { A: 'x'.repeat(MAX_SECRET_LENGTH + 1) })).toThrow(RangeError);
    expect(() => createStreamRedactor().push(5 as unknown as string)).toThrow(TypeError);
  });
});

describe('org secrets in every form', () => {
  const value = 'Tr0ub4dor&3-horse/staple';
  const r = createRedactor({ DEPLOY: value });
  it('raw, base64, base64url, URL-encoded and JSON-escaped', () => {
    for (const form of [value, b64(value), b64(value).replace(/=+$/, ''), Buffer.from(value).toString('base64url'), encodeURIComponent(value), JSON.stringify(value).slice(1, -1)]) {
      expect(r.redact(`x ${form} y`), form).toBe(`x ${REDACTED} y`);
    }
  });
  it('inside a larger base64 text at all three byte alignments', () => {
    for (const pre of ['', 'a', 'ab', 'abc', 'user:']) {
      const enc = b64(`${pre}${value}:tail-of-the-file`);
      const out = r.redact(enc);
      expect(out, pre).toContain(REDACTED);
      const inner = secretForms(value).filter((f) => enc.includes(f));
      expect(inner.length, pre).toBeGreaterThan(0);
      for (const f of inner) expect(out).not.toContain(f);
    }
  });
  it('a multi-line value as the terminal prints it, and a value typed one key at a time', () => {
    const multi = 'first-line-AAA\nsecond-line-BBB';
    expect(streamed('a\r\nfirst-line-AAA\r\nsecond-line-BBB\r\n', { M: multi }, everyChar('a\r\nfirst-line-AAA\r\nsecond-line-BBB\r\n'))).toBe(`a\r\n${REDACTED}\r\n`);
    const typed = `echo ${value}\r\n`;
    expect(streamed(typed, { DEPLOY: value }, everyChar(typed))).toBe(`echo ${REDACTED}\r\n`);
  });
  it(`ignores values shorter than ${MIN_SECRET_LENGTH} characters`, () => {
    expect(redact('abc 12345', { A: 'abc', B: '12345' })).toBe('abc 12345');
  });
  it('the receipt names the secret, never its value', () => {
    const seen: MaskEvent[] = [];
    r.redact(`${value} and ghp_${'a1B2'.repeat(9)}`, (m) => seen.push(m));
    expect(seen).toEqual(expect.arrayContaining([{ rule: 'org-secret', secret: 'DEPLOY' }, { rule: 'github-token' }]));
    expect(JSON.stringify(seen)).not.toContain(value);
  });
});

describe('the corpus', () => {
  it(`has at least 300 secret cases and harmless look-alikes, and is the same for the same seed`, () => {
    expect(corpus.cases.filter((c) => c.kind === 'secret').length).toBeGreaterThanOrEqual(300);
    expect(corpus.cases.filter((c) => c.kind === 'harmless').length).toBeGreaterThanOrEqual(60);
    expect(buildCorpus(10)).toEqual(corpus);
  });
  it('nothing leaks in one write or byte by byte, and nothing harmless changes', () => {
    const r = createRedactor(corpus.orgSecrets);
    for (const c of corpus.cases) {
      for (const out of [r.redact(c.text), streamed(c.text, corpus.orgSecrets, everyChar(c.text))]) {
        expect(leaked(c, out), `${c.id}: ${JSON.stringify(out)}`).toBeNull();
        if (c.kind === 'harmless') expect(out, c.id).toBe(c.text);
      }
    }
  });
  it('is stable: redacting twice changes nothing more', () => {
    const r = createRedactor(corpus.orgSecrets);
    for (const c of corpus.cases) {
      const once = r.redact(c.text);
      expect(r.redact(once), c.id).toBe(once);
    }
  });
});

describe('findSecrets and redactStrings', () => {
  it('names the rule of each stretch it would mask', () => {
    const found = findSecrets(`a ghp_${'a1B2'.repeat(9)} b password=hunter22`);
    expect(found.map((m) => m.rule).sort()).toEqual(['github-token', 'secret-assignment']);
  });
  it('walks objects and arrays and leaves kept keys alone', () => {
    const r = createRedactor({ S: 'secret-value-1' });
    const out = redactStrings({ id: 'secret-value-1', list: ['x secret-value-1'], n: 3 }, r, (k) => k === 'id');
    expect(out).toEqual({ id: 'secret-value-1', list: [`x ${REDACTED}`], n: 3 });
  });
});

describe('large chunks', () => {
  it('a chunk far larger than the hold limit passes unchanged when nothing in it is held', () => {
    const big = 'the quick brown fox jumps over the lazy dog 0123456789\r\n'.repeat(40_000);
    const s = createStreamRedactor();
    expect(s.push(big) + s.end()).toBe(big);
  });
  it('an endless candidate is masked once it passes the hold limit, never released', () => {
    const s = createStreamRedactor(DEFAULT_RULES, {}, { maxHoldChars: 1000 });
    const out = s.push(`x=1 -----BEGIN RSA PRIVATE KEY-----\n${'QUJD'.repeat(600)}`);
    expect(out).toBe(`x=1 -----BEGIN RSA PRIVATE KEY-----${REDACTED}`);
  });
});
