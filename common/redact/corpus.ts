import { alphabet, type Rand } from './rule';
import { DEFAULT_RULES } from './rules/index';

/**
 * A deterministic corpus of terminal output holding secrets, and of harmless look-alikes (issue
 * 10). Every value is FAKE and generated at run time from a seeded random source, so nothing in
 * the repository looks like a real token (GitHub push protection never sees one).
 *
 * A case is what a program prints (`text`), the substrings that must never be readable after
 * redaction (`secrets`; a rule keeps its label, so only the value is listed), and for harmless
 * cases the promise that the text comes through unchanged.
 */

export interface CorpusCase {
  id: string;
  kind: 'secret' | 'harmless';
  /** The rule or org-secret form the case exercises (documentation, failure messages). */
  what: string;
  text: string;
  secrets: string[];
}

export interface Corpus {
  /** The org's configured secrets (name → value), as an admin would save them. */
  orgSecrets: Record<string, string>;
  cases: CorpusCase[];
}

/** mulberry32: small, fast, and the same sequence on every machine. */
export function seeded(seed: number): Rand {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const cache = new Map<string, string>();
  return {
    int: (n) => Math.floor(next() * n),
    pick: (xs) => xs[Math.floor(next() * xs.length)],
    chars(spec, n) {
      let a2 = cache.get(spec);
      if (a2 === undefined) cache.set(spec, (a2 = alphabet(spec)));
      let out = '';
      for (let k = 0; k < n; k++) out += a2[Math.floor(next() * a2.length)];
      return out;
    },
  };
}

const b64 = (s: string) => btoa(s);
const b64url = (s: string) => btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
/** base64 of UTF-8 text (btoa alone takes Latin-1 only). */
const b64utf8 = (s: string) => btoa(String.fromCharCode(...new TextEncoder().encode(s)));

/** How a printed line is dressed on a terminal: colours, redraws, cursor moves, CRLF. */
const DRESS: Array<[string, (t: string) => string]> = [
  ['plain', (t) => `${t}\r\n`],
  ['reverse-video', (t) => `\x1b[7m${t}\x1b[27m\r\n`],
  ['colour-log', (t) => `\x1b[2m12:01:07\x1b[0m \x1b[1;33mWARN\x1b[0m config \x1b[36m${t}\x1b[0m\r\n`],
  ['spinner-redraw', (t) => `\r\x1b[K⠋ loading\r\x1b[K${t}\r\n`],
  ['cursor-move', (t) => `\x1b[12Gvalue\x1b[3D\x1b[K${t}\r\n`],
  ['bold-adjacent', (t) => `token:\x1b[1m${t}\x1b[22m done\r\n`],
];

/** Where a vendor token turns up: CLI logs, .env dumps, docker inspect, git remote, curl -v, tracebacks. */
const SETTINGS: Array<[string, (t: string) => string]> = [
  ['bare', (t) => t],
  ['log', (t) => `2026-11-26T08:00:01Z INFO using credential ${t} for upload`],
  ['docker-inspect', (t) => `            "Env": ["PATH=/usr/bin", "X=${t}"],`],
  ['traceback', (t) => `  File "app.py", line 12, in <module>\r\n    client = Client("${t}")`],
  ['quoted', (t) => `'${t}'`],
];

function orgSecrets(r: Rand): Record<string, string> {
  const names = [
    'DB_PASSWORD', 'STRIPE_SECRET', 'SMTP_PASSWORD', 'DEPLOY_KEY', 'SIGNING_SECRET', 'REDIS_AUTH', 'ADMIN_PASS',
    'WEBHOOK_SECRET', 'LICENSE_KEY', 'VAULT_UNSEAL', 'S3_SECRET', 'CI_TOKEN', 'SENTRY_AUTH', 'OPS_PIN_LONG',
    'LDAP_BIND_PW', 'ENCRYPTION_KEY', 'SSH_PASSPHRASE', 'PAGER_KEY', 'MULTILINE_CERT_PW', 'UNICODE_SECRET',
  ];
  const out: Record<string, string> = {};
  names.forEach((name, k) => {
    if (name === 'MULTILINE_CERT_PW') out[name] = `line-one-${r.chars('A-Za-z0-9', 10)}\nline-two-${r.chars('A-Za-z0-9', 10)}`;
    else if (name === 'UNICODE_SECRET') out[name] = `pässwörd-${r.chars('A-Za-z0-9', 12)}-ß`;
    else out[name] = `${r.chars('A-Za-z', 3)}${r.chars('A-Za-z0-9', 10 + (k % 12))}${r.pick(['/', '+', '&', '"', ' ', '%', '='])}${r.chars('A-Za-z0-9', 4)}`;
  });
  return out;
}

/** Formats whose value carries no prefix: found by their label in a file a program prints. */
function contextCases(r: Rand): Array<[string, string, string[]]> {
  const awsSecret = r.chars('A-Za-z0-9/+', 40);
  const session = `IQoJb3JpZ2luX2Vj${r.chars('A-Za-z0-9+/', 300)}`;
  const pemLines = Array.from({ length: 6 }, () => r.chars('A-Za-z0-9+/', 64));
  const saKey = `-----BEGIN PRIVATE KEY-----\\n${pemLines.join('\\n')}\\n-----END PRIVATE KEY-----\\n`;
  const azureKey = `${r.chars('A-Za-z0-9+/', 86)}==`;
  const npmAuth = b64(`deploy:${r.chars('A-Za-z0-9', 16)}`);
  const npmTok = r.chars('A-Za-z0-9', 36);
  const dockerAuth = b64(`ci-bot:${r.chars('A-Za-z0-9', 20)}`);
  const kubeKey = b64(`-----BEGIN EC PRIVATE KEY-----\n${r.chars('A-Za-z0-9+/', 120)}\n-----END EC PRIVATE KEY-----\n`);
  const dd = r.chars('a-f0-9', 32);
  const cf = r.chars('A-Za-z0-9_-', 40);
  const twilio = r.chars('a-f0-9', 32);
  const heroku = `${r.chars('a-f0-9', 8)}-${r.chars('a-f0-9', 4)}-${r.chars('a-f0-9', 4)}-${r.chars('a-f0-9', 4)}-${r.chars('a-f0-9', 12)}`;
  const azSecret = r.chars('A-Za-z0-9_~.-', 34);
  const pgp = Array.from({ length: 5 }, () => r.chars('A-Za-z0-9+/', 64));
  const yamlPem = Array.from({ length: 4 }, () => r.chars('A-Za-z0-9+/', 64));
  const crlfPem = Array.from({ length: 4 }, () => r.chars('A-Za-z0-9+/', 64));
  const pw = () => `${r.chars('A-Za-z0-9', 14)}#${r.int(10)}`;
  const [p1, p2, p3, p4, p5, p6] = [pw(), pw(), pw(), pw(), pw(), pw()];
  return [
    ['aws-credentials-file', `[default]\r\naws_access_key_id = AKIA${r.chars('A-Z2-7', 16)}\r\naws_secret_access_key = ${awsSecret}\r\n`, [awsSecret]],
    ['aws-session-token', `export AWS_SESSION_TOKEN=${session}\r\n`, [session.slice(12)]],
    ['aws-sts-json', `{"Credentials": {"SecretAccessKey": "${awsSecret}", "SessionToken": "${session}"}}\r\n`, [awsSecret, session.slice(12)]],
    ['google-service-account', `{\r\n  "type": "service_account",\r\n  "private_key_id": "${r.chars('a-f0-9', 40)}",\r\n  "private_key": "${saKey}",\r\n  "client_email": "x@p.iam.gserviceaccount.com"\r\n}\r\n`, pemLines],
    ['azure-connection-string', `AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acct1;AccountKey=${azureKey};EndpointSuffix=core.windows.net\r\n`, [azureKey.slice(0, 86)]],
    ['azure-servicebus', `Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=${azureKey}\r\n`, [azureKey.slice(0, 86)]],
    ['azure-client-secret', `AZURE_CLIENT_SECRET value: ${r.chars('A-Za-z0-9', 3)}8Q~${azSecret}\r\n`, [azSecret]],
    ['npmrc', `//registry.npmjs.org/:_authToken=npm_${npmTok}\r\n_auth=${npmAuth}\r\nalways-auth=true\r\n`, [npmTok, npmAuth.replace(/=+$/, '')]],
    ['docker-config', `{\r\n\t"auths": {\r\n\t\t"ghcr.io": {\r\n\t\t\t"auth": "${dockerAuth}"\r\n\t\t}\r\n\t}\r\n}\r\n`, [dockerAuth.replace(/=+$/, '')]],
    ['kubeconfig', `users:\r\n- name: admin\r\n  user:\r\n    client-certificate-data: ${b64('public cert data here')}\r\n    client-key-data: ${kubeKey}\r\n`, [kubeKey.slice(0, 60), kubeKey.slice(-60)]],
    ['datadog', `DD_API_KEY=${dd}\r\nDD_APP_KEY=${dd}${r.chars('a-f0-9', 8)}\r\n`, [dd]],
    ['cloudflare', `export CLOUDFLARE_API_TOKEN="${cf}"\r\n`, [cf]],
    ['twilio', `TWILIO_AUTH_TOKEN: ${twilio}\r\n`, [twilio]],
    ['heroku-legacy', `HEROKU_API_KEY=${heroku}\r\n`, [heroku]],
    ['pgp-private-key', `-----BEGIN PGP PRIVATE KEY BLOCK-----\r\n\r\n${pgp.join('\r\n')}\r\n=${r.chars('A-Za-z0-9', 4)}\r\n-----END PGP PRIVATE KEY BLOCK-----\r\n`, pgp],
    ['pem-yaml-indented', `tls:\r\n  key: |\r\n    -----BEGIN RSA PRIVATE KEY-----\r\n    ${yamlPem.join('\r\n    ')}\r\n    -----END RSA PRIVATE KEY-----\r\n`, yamlPem],
    ['pem-crlf', `-----BEGIN OPENSSH PRIVATE KEY-----\r\n${crlfPem.join('\r\n')}\r\n-----END OPENSSH PRIVATE KEY-----\r\n`, crlfPem],
    ['pem-head-truncated', `$ head -3 id_rsa\r\n-----BEGIN RSA PRIVATE KEY-----\r\n${crlfPem[0]}\r\n${crlfPem[1]}\r\n$ `, [crlfPem[0], crlfPem[1]]],
    ['env-dump', `HOME=/home/dev\r\nDATABASE_PASSWORD=${p1}\r\nSECRET_KEY_BASE="${p2}"\r\nLANG=C.UTF-8\r\n`, [p1, p2]],
    ['yaml-config', `database:\r\n  host: db\r\n  password: ${p3}\r\n  pool: 5\r\n`, [p3]],
    ['toml-config', `[server]\r\nsecret = "${p4}"\r\n`, [p4]],
    ['json-config', `{"user":"app","password":"${p5}","port":5432}\r\n`, [p5]],
    ['export-typed', `$ export TOKEN=${p6}\r\n$ `, [p6]],
    ['pgpass', `$ cat ~/.pgpass\r\ndb.internal:5432:*:app:${p1}\r\n`, [p1]],
    ['netrc', `$ cat ~/.netrc\r\nmachine api.heroku.com\r\n  login me@example.com\r\n  password ${p2}\r\n`, [p2]],
    ['mysql-cli', `+ mysql -h db -u root -p${p3} app < dump.sql\r\n`, [p3]],
    ['cli-password-flag', `+ psql --username app --password ${p4} -h db\r\n`, [p4]],
    ['pgpassword-env', `+ PGPASSWORD=${p5} pg_dump -h db app\r\n`, [p5]],
    ['curl-verbose', `> GET /v1/me HTTP/2\r\n> Host: api.example.com\r\n> authorization: Bearer ${p6}${r.chars('A-Za-z0-9', 20)}\r\n> accept: */*\r\n`, [p6]],
    ['curl-basic', `> Authorization: Basic ${b64(`admin:${p1}`)}\r\n`, [b64(`admin:${p1}`).replace(/=+$/, '')]],
    ['curl-user', `$ curl -u deploy:${p2} https://api.example.com/\r\n`, [p2]],
    ['git-remote', `origin\thttps://x-access-token:${p3}@github.com/acme/app.git (fetch)\r\n`, [p3]],
    ['db-urls', `DATABASE_URL=postgres://app:${p4}@db:5432/app\r\nREDIS_URL=redis://:${p5}@cache:6379/0\r\nAMQP=amqp://guest:${p6}@mq:5672/\r\nMONGO=mongodb+srv://u:${p1}@c0.mongodb.net/x\r\nMYSQL=mysql://root:${p2}@127.0.0.1/app\r\n`, [p4, p5, p6, p1, p2]],
  ];
}

function harmless(r: Rand): Array<[string, string]> {
  const hex = (n: number) => r.chars('a-f0-9', n);
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
  const words = ['the', 'build', 'passed', 'release', 'notes', 'for', 'version', 'with', 'fixes', 'and', 'docs'];
  const sentence = () => Array.from({ length: 8 }, () => r.pick(words)).join(' ');
  const ulid = () => r.chars('0123456789ABCDEFGHJKMNPQRSTVWXYZ', 26);
  const cert = Array.from({ length: 4 }, () => r.chars('A-Za-z0-9+/', 64)).join('\r\n');
  const out: Array<[string, string]> = [];
  for (let k = 0; k < 4; k++) {
    out.push(['git-sha', `commit ${hex(40)}\r\n`]);
    out.push(['git-log-oneline', `${hex(7)} Merge pull request #${r.int(999)} from acme/feature-${r.chars('a-z', 6)}\r\n`]);
    out.push(['uuid', `request id ${uuid()} took ${r.int(900)} ms\r\n`]);
    out.push(['ulid', `event ${ulid()} stored\r\n`]);
    out.push(['etag', `< etag: W/"${hex(32)}"\r\n`]);
    out.push(['npm-integrity', `      "integrity": "sha512-${r.chars('A-Za-z0-9+/', 86)}=="\r\n`]);
    out.push(['yarn-integrity', `  integrity sha1-${r.chars('A-Za-z0-9+/', 27)}=\r\n`]);
    out.push(['go-sum', `golang.org/x/text v0.${r.int(20)}.0 h1:${r.chars('A-Za-z0-9+/', 43)}=\r\n`]);
    out.push(['image-digest', `ghcr.io/acme/app@sha256:${hex(64)}\r\n`]);
    out.push(['base64-ordinary', `${b64utf8(sentence())}\r\n`]);
    out.push(['ssh-public-key', `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA${r.chars('A-Za-z0-9+/', 43)} dev@laptop\r\n`]);
    out.push(['certificate', `-----BEGIN CERTIFICATE-----\r\n${cert}\r\n-----END CERTIFICATE-----\r\n`]);
    out.push(['public-key', `-----BEGIN PUBLIC KEY-----\r\n${cert}\r\n-----END PUBLIC KEY-----\r\n`]);
    out.push(['coloured-ls', `\x1b[0m\x1b[01;34msrc\x1b[0m  \x1b[01;32mbuild.sh\x1b[0m  README.md\r\n`]);
  }
  out.push(
    ['prose-password', 'password: must be at least 12 characters\r\n'],
    ['prose-token-type', '  token: string;\r\n'],
    ['prose-secret', 'secret: required\r\n'],
    ['prompt', '[sudo] password for dev: \r\n'],
    ['passwd-error', 'cat: /etc/passwd: Permission denied\r\n'],
    ['branch-name', 'git checkout sk-some-feature-branch-name\r\n'],
    ['env-reference', 'export GITHUB_TOKEN=$CI_GITHUB_TOKEN\r\n'],
    ['github-actions', '        token: ${{ secrets.GITHUB_TOKEN }}\r\n'],
    ['url-no-password', 'Cloning into https://github.com/acme/app.git\r\npostgres://localhost:5432/app\r\n'],
    ['url-port', 'listening on http://127.0.0.1:3000/ and https://example.com:8443/path\r\n'],
    ['stripe-publishable', 'STRIPE_PUBLISHABLE=pk_test_TYooMQauvdEDq54NiTphI7jx\r\n'],
    ['key-value', 'sort_key=name secret_santa_list.txt key-value store\r\n'],
    ['bearer-prose', 'the bearer of this note is welcome\r\n'],
    ['max-tokens', 'max_tokens=4096 temperature=0.2\r\n'],
    ['jwt-looking-word', 'eyJustKidding is not a token\r\n'],
    ['python-package', 'import hf_utils; from sk_learn import x\r\n'],
    ['timestamp', '12:34:56:789 started\r\n'],
    ['progress', '\r[=====>    ] 52%\r[==========] 100%\r\n'],
    ['unicode', 'ünïcödé ✓ 日本語 🚀 done\r\n'],
    ['sql', 'SELECT id, token_count FROM usage WHERE secret_id IS NULL;\r\n'],
    ['cookie-in-code', "  headers: { Cookie: `session=${sessionId}`, 'Set-Cookie': cookieValue },\r\n"],
    // Words and numbers that start like the newer vendor prefixes (rules/vendors-more/).
    ['prefix-look-alikes', 'pattern path patch; API-GATEWAY-V2 ready; ratio 1/2 and 2/3 of 1/1234567890; sat. morning; sl.no 4; re_run_all_the_tests_in_this_suite_now\r\n'],
    ['prefix-look-alikes-2', 'sk-0123456789abcdef0123456789abcdef0 is 33 digits; sha256~short; EAAnything; secret_handshake_protocol_version_two_point_one\r\n'],
  );
  return out;
}

/**
 * The corpus: every rule's example (but wholeOnly ones) in several settings and terminal dresses, the prefix-less
 * formats in the files they live in, every org secret in every form, and harmless look-alikes.
 */
export function buildCorpus(seed = 10): Corpus {
  const r = seeded(seed);
  const org = orgSecrets(r);
  const cases: CorpusCase[] = [];
  const add = (kind: CorpusCase['kind'], what: string, text: string, secrets: string[]) =>
    cases.push({ id: `${kind}-${cases.length + 1}-${what}`, kind, what, text, secrets });

  // A wholeOnly rule's value cut by a push boundary is released by design: its examples are tested
  // whole and in one push (late-labels.test.ts), not here, where every case is cut everywhere.
  for (const rule of DEFAULT_RULES) {
    if (rule.wholeOnly) continue;
    for (let k = 0; k < 4; k++) {
      const ex = rule.example(r);
      const [setting, place] = rule.name === 'pgpass-password' || rule.name === 'private-key-block' ? SETTINGS[0] : SETTINGS[k % SETTINGS.length];
      const [dress, wear] = DRESS[(k + rule.name.length) % DRESS.length];
      const text = rule.name === 'private-key-block' || rule.name === 'pgpass-password' ? ex.text.replace(/\r?\n/g, '\r\n') : wear(place(ex.text));
      add('secret', `${rule.name}/${setting}/${dress}`, text, [ex.secret]);
    }
  }
  for (const [what, text, secrets] of contextCases(r)) add('secret', what, text, secrets);
  for (const [name, value] of Object.entries(org)) {
    const bytes = new TextEncoder().encode(value);
    const raw = String.fromCharCode(...bytes);
    const forms: Array<[string, string, string[]]> = [
      ['raw', `${name}=${value.replace(/\n/g, '\r\n')}`, value.split('\n')],
      ['echo', `$ echo "$${name}"\r\n${value.replace(/\n/g, '\r\n')}`, value.split('\n')],
      ['base64', b64(raw), [b64(raw).slice(1, -3)]],
      ['base64url', b64url(raw), [b64url(raw).slice(1, -3)]],
      ['url-encoded', `https://api.example.com/cb?key=x&s=${encodeURIComponent(value)}&z=1`, [encodeURIComponent(value)]],
      ['json-escaped', JSON.stringify({ note: 'config', value }), [JSON.stringify(value).slice(1, -1)]],
    ];
    for (let k = 0; k < 3; k++) {
      // Inside a larger base64 text at byte alignment k: a config file base64'd by a pipeline.
      const blob = String.fromCharCode(...new TextEncoder().encode(`${'x'.repeat(k)}config: start\nkey=`)) + raw + '\nend of file\n';
      const enc = b64(blob);
      const from = Math.ceil(((k + 18) * 8) / 6) + 1;
      const to = Math.floor(((k + 18 + bytes.length) * 8) / 6) - 1;
      forms.push([`base64-embedded-${k}`, enc, [enc.slice(from, to)]]);
    }
    for (const [form, text, secrets] of forms) {
      const [, wear] = DRESS[cases.length % DRESS.length];
      add('secret', `org-secret:${name}/${form}`, form.startsWith('base64') ? `${text}\r\n` : wear(text), secrets.filter((s) => s.length >= 6));
    }
  }
  for (const [what, text] of harmless(r)) add('harmless', what, text, []);
  return { orgSecrets: org, cases };
}

/** Whether `output` shows any of the case's secrets (a window of 12+ characters counts as readable). */
export function leaked(c: CorpusCase, output: string): string | null {
  for (const s of c.secrets) {
    if (s.length <= 12) {
      if (output.includes(s)) return s;
      continue;
    }
    for (let k = 0; k + 12 <= s.length; k += 4) if (output.includes(s.slice(k, k + 12))) return s.slice(k, k + 12);
  }
  return null;
}
