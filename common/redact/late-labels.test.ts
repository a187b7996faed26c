import { describe, expect, it } from 'vitest';
import { seeded } from './corpus';
import { createStreamRedactor, redact, REDACTED } from './index';
import { everyChar, streamed } from './testing';

/**
 * Secrets whose label comes after them or far above them: a password piped into a registry login,
 * `net use`'s password before `/user:`, MaxMind and Mailchimp keys (their mark is a suffix), a
 * Kubernetes Secret's values under `data:` / `stringData:`, a Sumo Logic access id.
 */

/** Deterministic filler (never a real key): `n` characters of `alphabet`. */
const fill = (n: number, alphabet = 'aB3xK9mQ2zR7tY5wP8nL4vC6') => Array.from({ length: n }, (_, i) => alphabet[(i * 5 + 1) % alphabet.length]).join('');
const hex = (n: number) => fill(n, '0123456789abcdef');
const PW = 'Jmbk7CMfHj7YehwQ';

/** Cut positions: every 1–9 characters, from a seeded source (the same on every machine). */
function randomCuts(text: string, seed: number): number[] {
  const r = seeded(seed);
  const cuts: number[] = [];
  for (let at = r.int(9) + 1; at < text.length; at += r.int(9) + 1) cuts.push(at);
  return cuts;
}

/** Whole, one character at a time and in random chunks: `secret` is gone and `kept` is still there. */
function masks(text: string, secret: string, kept: string[] = [], ways: 'every cut' | 'one push' = 'every cut') {
  const outs = [redact(text), streamed(text)];
  if (ways === 'every cut') outs.push(streamed(text, {}, everyChar(text)), ...[1, 2, 3].map((seed) => streamed(text, {}, randomCuts(text, seed))));
  for (const out of outs) {
    expect(out, text).not.toContain(secret);
    expect(out, text).toContain(REDACTED);
    for (const k of kept) expect(out, text).toContain(k);
  }
}

/** Whole and one character at a time: nothing changes. */
function keeps(text: string) {
  expect(redact(text), text).toBe(text);
  expect(streamed(text, {}, everyChar(text)), text).toBe(text);
}

describe('a password piped into a registry login', () => {
  it.each([
    `$ echo ${PW} | docker login -u deploy --password-stdin registry.example.com\r\n`,
    `$ echo -n "${PW}" | podman login quay.io -u bot --password-stdin\r\n`,
    `$ printf '%s' '${PW}' | sudo helm registry login ghcr.io -u me --password-stdin\r\n`,
    `$ printf ${PW} | nerdctl login -u me --password-stdin\r\n`,
    `$ cat <<<${PW} | oras login -u me --password-stdin r.example.com\r\n`,
    `$ cat <<< "${PW}" | crane auth login ghcr.io -u me --password-stdin\r\n`,
    `cd /srv && echo '${PW}' | docker --config /tmp/d login --username me --password-stdin\n`,
    // Bash's xtrace prints a pipeline's commands on lines of their own.
    `+ echo ${PW}\n+ docker login -u ci --password-stdin registry.gitlab.com\n`,
  ])('%s', (text) => masks(text, PW, ['login'], 'one push'));

  it('leaves variables, other pipes and other commands alone', () => {
    for (const text of [
      '$ echo $CI_REGISTRY_PASSWORD | docker login -u ci --password-stdin\r\n',
      '$ echo "$TOKEN" | helm registry login r -u me --password-stdin\r\n',
      '$ echo hello world | docker login\r\n',
      '$ echo deadbeefcafe | grep cafe\r\n',
      '$ echo build-42 || docker login\r\n',
      '$ printf "%s\\n" one two | sort\r\n',
      '$ cat <<<EOF | docker run -i alpine sh\r\n',
      `commit ${hex(40)}\r\n`,
    ]) keeps(text);
  });

  it('never holds a typed echo argument: each key is let out as it comes', () => {
    const r = createStreamRedactor();
    let out = '';
    let typed = '';
    for (const c of '$ echo hello world | docker login\r\n') {
      typed += c;
      out += r.push(c);
      expect(out).toBe(typed);
    }
  });
});

describe("`net use`'s password before /user:", () => {
  it.each([
    `C:\\> net use \\\\files\\share ${PW} /user:CORP\\bob\r\n`,
    `C:\\> net use Z: \\\\files.corp\\deploy ${PW} /USER:bob /persistent:no\r\n`,
    `C:\\> NET USE * \\\\10.0.0.5\\c$ "${PW}" /user:admin\r\n`,
  ])('%s', (text) => masks(text, PW, ['/user:', '/USER:'].filter((x) => text.includes(x))));

  it('leaves switches, prompts and the share itself alone', () => {
    for (const text of ['net use Z: \\\\files\\share /user:bob\r\n', 'net use \\\\files\\share * /user:bob\r\n', 'net use Z: \\\\files\\share /persistent:no\r\n', 'net use Z: /delete\r\n']) keeps(text);
  });
});

describe('MaxMind license keys (`…_mmk`)', () => {
  const key = `Q7vXb2_${fill(29)}_mmk`;
  it('masks the 29-character body, keeping the head and the mark', () => {
    masks(`GEOIPUPDATE_LICENSE_KEY ${key}\n`, fill(29), ['Q7vXb2_', '_mmk']);
    masks(`LicenseKey ${key}\r\n`, fill(29));
    masks(`curl "https://download.maxmind.com/app/geoip_download?edition_id=GeoLite2-City&license_key=${key}&suffix=tar.gz"\n`, fill(29));
  });
  it('masks a key whose head reads like a word only when it is whole in one push', () => {
    masks(`key select_${fill(29)}_mmk\n`, fill(29), ['select_'], 'one push');
  });
  it('leaves identifiers, digests and paths alone, and never holds a typed identifier', () => {
    for (const text of [
      `select_${fill(29)}_mmkx and more\n`,
      `aB3dE9_${hex(40)}\n`,
      `/var/lib/GeoIP/GeoLite2-City.mmdb\n`,
      `const create_the_mmk_files_now = 1;\n`,
      `Q7vXb2_${fill(28)}_mmk\n`,
    ]) keeps(text);
    for (const typed of ['select_statement_for_all_users_in_the_system', 'CONFIG_VALUE_FOR_THE_PRODUCTION_SERVER_NOW', 'base64_encode_the_whole_input_string_please']) {
      const r = createStreamRedactor();
      let out = '';
      for (const c of typed) out += r.push(c);
      expect(out, typed).toBe(typed);
    }
  });
});

describe('bare Mailchimp API keys (`<32 hex>-us12`)', () => {
  const k = hex(32);
  it('masks the hex and keeps the data centre, in one write and in one push', () => {
    masks(`mailchimp key ${k}-us21\n`, k, ['-us21'], 'one push');
    masks(`{"list_id": "x", "id": "${k}-us6"}\n`, k, ['-us6'], 'one push');
    // Among other pushes: only a push boundary inside the key releases it.
    const text = `line one\r\n${k}-us14 configured\r\nline three\r\n`;
    const r = createStreamRedactor();
    const out = [text.slice(0, 10), text.slice(10, 60), text.slice(60)].map((c) => r.push(c)).join('') + r.end();
    expect(out).toBe(`line one\r\n${REDACTED}-us14 configured\r\nline three\r\n`);
  });
  it('leaves digests, UUIDs and commit ids alone, and never holds typed hex', () => {
    for (const text of [`etag ${k}\n`, `${k}-user\n`, `${hex(40)}-us1\n`, `${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}\n`, `md5 ${k} -us1\n`]) keeps(text);
    const r = createStreamRedactor();
    let out = '';
    for (const c of `${k}-us`) out += r.push(c);
    expect(out).toBe(`${k}-us`);
  });
});

describe('Azure DevOps PATs in the 84-character format', () => {
  const pat = `${fill(52)}JQQJ99BAACAAAAAAAAAAAAASAZDO${fill(4)}`;
  it('masks the whole key when it reaches the redactor whole', () => {
    masks(`AZDO_PAT ${pat}\n`, fill(52), ['AZDO_PAT '], 'one push');
    masks(`curl -H "Authorization: Basic $(echo -n :x)" ${pat}\n`, fill(52), [], 'one push');
  });
  it('leaves other long runs alone and never holds a typed one', () => {
    for (const text of [`${fill(52)}JQQJ${fill(10)}\n`, `sha512 ${hex(84)}\n`, `${fill(84)}\n`]) keeps(text);
    const r = createStreamRedactor();
    let out = '';
    for (const c of pat.slice(0, 60)) out += r.push(c);
    expect(out).toBe(pat.slice(0, 60));
  });
});

describe("a Kubernetes Secret's values, whatever the key", () => {
  const b64 = (s: string) => btoa(s);
  const url = 'postgres://app:pw@db/app';
  it('masks data: (base64) and stringData: (plain) entries of a manifest', () => {
    const manifest = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque\ndata:\n  username: ${b64('deploy-user')}\n  DATABASE_URL: ${b64(url)}\nstringData:\n  api-endpoint-login: ${PW}\n  note: "${PW}x"\n`;
    masks(manifest, b64('deploy-user'), ['username: ', 'stringData:', 'name: app']);
    masks(manifest, b64(url));
    masks(manifest, PW);
  });
  it('masks `kubectl get secret -o yaml` (data before kind) and `-o json`', () => {
    const yaml = `apiVersion: v1\ndata:\n  ca.crt: ${b64('x'.repeat(300))}\n  login: ${b64('deploy-user')}\nkind: Secret\nmetadata:\n  name: db\n`;
    masks(yaml, b64('deploy-user'), ['ca.crt: ', 'kind: Secret']);
    const json = `{\r\n    "apiVersion": "v1",\r\n    "data": {\r\n        "config.json": "${b64('{"k":"v1"}')}",\r\n        "user": "${b64('deploy-user')}"\r\n    },\r\n    "kind": "Secret"\r\n}\r\n`;
    masks(json, b64('deploy-user'), ['"config.json": "', '"kind": "Secret"']);
    masks(json, b64('{"k":"v1"}'));
  });
  it("masks a long block's later entries and a stringData block scalar", () => {
    const values = Array.from({ length: 20 }, (_, k) => b64(`value-number-${k}-${fill(8)}`));
    const yaml = `apiVersion: v1\ndata:\n${values.map((v, k) => `  key_${k}: ${v}\n`).join('')}kind: Secret\n`;
    for (const v of values) masks(yaml, v, ['key_0: ', 'kind: Secret']);
    masks(`kind: Secret\nstringData:\n  config.yaml: |\n    user: deploy\n    password: ${PW}\n  other: x\ntype: Opaque\n`, PW, ['config.yaml: ', 'type: Opaque']);
  });
  it('leaves ConfigMaps, other YAML and code alone', () => {
    for (const text of [
      'apiVersion: v1\ndata:\n  LOG_LEVEL: info\n  mode: abcdefgh\n  replicas: "3"\nkind: ConfigMap\n',
      'spec:\n  containers:\n    image: nginx:1.25\n    name: web\n',
      `metadata:\n  uid: ${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}\n  resourceVersion: "12345678"\n`,
      `const data = {\n  sha: "${hex(40)}",\n};\n`,
      '{"data": {\n  "id": 42,\n  "name": "x"\n}}\n',
      'data:\n  - one\n  - two\n',
    ]) keeps(text);
  });
});

describe('Sumo Logic access ids', () => {
  const id = 'suAbC1dE2fG3hI';
  it('masks SUMO_ACCESS_ID= and accessId near sumologic', () => {
    masks(`export SUMO_ACCESS_ID=${id}\n`, id, ['SUMO_ACCESS_ID=']);
    masks(`SUMOLOGIC_ACCESSID: "${id}"\n`, id);
    masks(`provider "sumologic" {\n  access_id   = "${id}"\n  environment = "us2"\n}\n`, id, ['access_id']);
    masks(`sumologic:\n  accessId: ${id}\n  endpoint: https://api.sumologic.com\n`, id, ['accessId: ']);
  });
  it('leaves other access ids and short values alone', () => {
    for (const text of [`accessId: ${id}\n`, 'sumologic:\n  accessId: short\n', `SUMO_COLLECTOR_ID=${id}\n`, `commit ${hex(40)}\n`]) keeps(text);
  });
});
