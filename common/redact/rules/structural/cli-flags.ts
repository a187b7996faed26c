/**
 * Secrets passed as a tool's own short flag or argument, where the flag alone says nothing (`-p` is
 * a port to `docker run` and a password to `docker login`): the tool named earlier on the line
 * decides. Long `--password VALUE` / `--token=VALUE` flags are the assignment rule's.
 */
import * as C from '../../chars';
import type { Found, Rule } from '../../rule';
import * as S from './shared';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call.
const { chars, FAIL, lit, MORE, NEED, NO, peek, run, SPACE, YES } = C;
const { QUOTED_VALUE, fakePassword, lineBefore } = S;
/** An unquoted argument: up to whitespace, a quote or what ends a shell command (`,` stays: `user,password`). */
const ARGUMENT = chars(` \t\r\n'"\`;&|${C.CONTROL}`, true);

interface CliFlag {
  /** The flag as typed, with what separates it from its value: `-p ` (the next argument) or `-p` (attached). */
  flag: string;
  /** The command (and subcommand) that must come earlier on the line, tested on the line before the flag. */
  tool: RegExp;
  /** The secret is the part of the value after the first of this character (`user%password`). */
  after?: string;
  /** Arguments between the flag and the secret (`htpasswd -b FILE USER PASSWORD`: 2); an attached flag's own value counts as one (`/user:NAME PASSWORD`: 1). */
  skip?: number;
  /** Characters an unquoted secret never starts with, beyond `-` (`net use \\h\s /user:…`: the next switch; `*`: asked at a prompt). */
  refuse?: string;
}

/** Registry clients whose `login` takes a password (`-p`, or on stdin: stdin-secrets.ts). */
export const LOGIN_TOOL_NAMES = ['docker', 'podman', 'nerdctl', 'buildah', 'skopeo', 'helm', 'oras', 'crane', 'regctl'];
const LOGIN_TOOLS = new RegExp(`\\b(${LOGIN_TOOL_NAMES.join('|')})\\b.*\\blogin\\b|\\baz\\s+login\\b`);
const MONGO = /\bmongo(sh|dump|restore|export|import|stat|top|files)?\b/;
const JAVA_KEYSTORE = /\b(keytool|jarsigner)\b/;
const GH_SECRET = /\bgh\s+secret\s+set\b/;
const NPM_CONFIG_SET = /\b(npm|pnpm|yarn)\s+config\s+set\s+\S*$/;
const RCLONE_CONFIG = /\brclone\s+config\s+(create|update)\b/;
const OPENSSL_PASS = /\s-(pass|passin|passout|password|srcpass|destpass|kdfpass)\s+$/;
const HTPASSWD = /\bhtpasswd\s+$/;
/** htpasswd's batch mode: `-b` takes the password from the command line, after the file and the user (`-n`: no file). */
const HTPASSWD_FLAGS: CliFlag[] = ['b', 'bc', 'cb', 'bB', 'Bb', 'bBc', 'Bbc', 'cbB', 'bm', 'mb', 'bs', 'bC', 'bD'].map((x) => ({ flag: `-${x} `, tool: HTPASSWD, skip: 2 }));
const HTPASSWD_STDOUT: CliFlag[] = ['nb', 'bn', 'nbB', 'Bnb', 'nBb', 'bnB'].map((x) => ({ flag: `-${x} `, tool: HTPASSWD, skip: 1 }));

/** Sorted so a longer flag is tried before a shorter one it starts with. */
const FLAGS: CliFlag[] = [
  { flag: '-a ', tool: /\bredis-cli\b/ },
  { flag: '-p ', tool: LOGIN_TOOLS },
  { flag: '-p ', tool: MONGO },
  { flag: '-P ', tool: /\b(sqlcmd|bcp|osql|isql|mosquitto_(pub|sub|rr)|zip|unzip|zipcloak|ssh-keygen)\b/ },
  { flag: '-N ', tool: /\bssh-keygen\b/ },
  { flag: '-w ', tool: /\bldap(search|add|modify|delete|whoami|passwd|compare|modrdn|exop|url)\b/ },
  { flag: '-k ', tool: /\bopenssl\b/ },
  { flag: '-K ', tool: /\bopenssl\b/ },
  { flag: 'pass:', tool: OPENSSL_PASS },
  { flag: '-U ', tool: /\b(smbclient|rpcclient|smbget|smbcacls|smbmap|net)\b/, after: '%' },
  { flag: '-u ', tool: /\blftp\b/, after: ',' },
  { flag: '-u ', tool: /\bcurl\b/, after: ':' },
  { flag: '-U ', tool: /\bcurl\b/, after: ':' },
  { flag: '--proxy-user ', tool: /\bcurl\b/, after: ':' },
  { flag: '--oauth2-bearer ', tool: /\bcurl\b/ },
  { flag: '-storepass ', tool: JAVA_KEYSTORE },
  { flag: '-keypass ', tool: JAVA_KEYSTORE },
  { flag: '-srcstorepass ', tool: JAVA_KEYSTORE },
  { flag: '-deststorepass ', tool: JAVA_KEYSTORE },
  { flag: '-srckeypass ', tool: JAVA_KEYSTORE },
  { flag: '-destkeypass ', tool: JAVA_KEYSTORE },
  { flag: '-new ', tool: /\bkeytool\b/ },
  { flag: '-p', tool: /\b(7z|7za|7zr|7zz|rar|unrar|sshpass)\b/ },
  { flag: '-b ', tool: GH_SECRET },
  { flag: '--body ', tool: GH_SECRET },
  { flag: '--body=', tool: GH_SECRET },
  { flag: '--from-literal=', tool: /\bkubectl\b.*\bcreate\s+secret\b/, after: '=' },
  { flag: 'aws_secret_access_key ', tool: /\baws\s+configure\s+set\s+$/ },
  { flag: 'aws_session_token ', tool: /\baws\s+configure\s+set\s+$/ },
  { flag: 'login ', tool: /\bvault\s+$/ },
  // `npm config set //registry.npmjs.org/:_authToken VALUE` (the .npmrc key, given as two arguments).
  { flag: ':_authToken ', tool: NPM_CONFIG_SET },
  { flag: ':_password ', tool: NPM_CONFIG_SET },
  { flag: ':_auth ', tool: NPM_CONFIG_SET },
  // `rclone config create NAME TYPE key value …`: the backend's secret options.
  { flag: 'secret_access_key ', tool: RCLONE_CONFIG },
  { flag: 'client_secret ', tool: RCLONE_CONFIG },
  { flag: 'password ', tool: RCLONE_CONFIG },
  { flag: 'token ', tool: RCLONE_CONFIG },
  { flag: 'pass ', tool: RCLONE_CONFIG },
  ...HTPASSWD_FLAGS,
  ...HTPASSWD_STDOUT,
  // Windows `net use \\host\share /user:NAME PASSWORD`.
  { flag: '/user:', tool: /\bnet\s+use\b/i, skip: 1, refuse: '/*' },
  { flag: '/USER:', tool: /\bnet\s+use\b/i, skip: 1, refuse: '/*' },
  // …and `net use [Z:] \\host\share PASSWORD /user:NAME`: the argument after the share, unless a switch or `*`.
  { flag: '\\\\', tool: /\bnet\s+use\s+([A-Za-z]:\s+|\*\s+)?$/i, skip: 1, refuse: '/*' },
];

/** The flags by their first two characters: a candidate reads only the few that can start there. */
const pairKey = (s: string, i: number) => s.charCodeAt(i) * 65536 + s.charCodeAt(i + 1);
const BY_PAIR = new Map<number, CliFlag[]>();
for (const x of FLAGS) {
  const k = pairKey(x.flag, 0);
  BY_PAIR.set(k, [...(BY_PAIR.get(k) ?? []), x]);
}

const DASH = 45;
/** The longest value masked; a longer one is masked up to here. */
const VALUE_MAX = 512;

/** Passwords, keys and tokens given to a command as its own flag: `docker login -p`, `redis-cli -a`, `openssl -passin pass:`. */
export const cliFlagRule: Rule = {
  name: 'cli-flag-secret',
  provider: 'command lines',
  source: 'https://redis.io/docs/latest/develop/tools/cli/',
  format:
    /\b(redis-cli\b.*\s-a|(docker|podman|helm)\b.*\blogin\b.*\s-p|ldap\w+\b.*\s-w|sqlcmd\b.*\s-P|smbclient\b.*\s-U\s+\S+%|keytool\b.*\s-storepass|openssl\b.*\s-pass(in|out)?\s+pass:|gh\s+secret\s+set\b.*\s--body)\s*\S+/,
  maxLength: VALUE_MAX,
  first: [...new Set(FLAGS.map((x) => x.flag[0]))].join(''),
  // After a space; or after `/` for the `//registry/:_authToken` key npm takes as an argument.
  notAfter: chars(' \t/', true),
  prefixes: [...new Set(FLAGS.map((x) => x.flag))],
  example(r) {
    const secret = fakePassword(r);
    const text = r.pick([
      `redis-cli -h cache.internal -a ${secret} ping`,
      `docker login -u deploy -p ${secret} registry.example.com`,
      `ldapsearch -x -D cn=admin,dc=example,dc=com -w ${secret} -b dc=example,dc=com`,
      `sqlcmd -S db -U sa -P ${secret} -Q "select 1"`,
      `smbclient //files/share -U deploy%${secret}`,
      `keytool -list -keystore app.jks -storepass ${secret}`,
      `openssl pkcs12 -in app.p12 -passin pass:${secret} -nodes`,
      `gh secret set DEPLOY_KEY --body "${secret}"`,
    ]);
    return { text, secret };
  },
  match(s, i, final, f) {
    if (i + 1 >= s.length) {
      if (final) return NO;
      // The text ended inside a flag, which is kept: nothing read so far is masked.
      f.holdFrom = s.length;
      return MORE;
    }
    const flags = BY_PAIR.get(pairKey(s, i));
    if (flags === undefined) return NO;
    let before: string | null = null;
    for (const { flag, tool, after, skip, refuse } of flags) {
      const v = lit(s, i, flag, final);
      if (v === NEED) {
        f.holdFrom = s.length;
        return MORE;
      }
      if (v === FAIL) continue;
      before ??= lineBefore(s, i);
      if (!tool.test(before)) continue;
      if (skip === undefined) return valueAt(s, v, after, final, f);
      const w = skipArguments(s, v, skip, final);
      if (w === NEED) {
        // The arguments before the secret are not all here yet: nothing read so far is masked.
        f.holdFrom = s.length;
        return MORE;
      }
      return w === FAIL ? NO : valueAt(s, w, after, final, f, refuse);
    }
    return NO;
  },
};

/** Where the argument after `count` arguments from v starts (FAIL: the command ends first; NEED: not all here yet). */
function skipArguments(s: string, v: number, count: number, final: boolean): number {
  let j = v;
  for (let k = 0; k < count; k++) {
    const q = peek(s, j, final);
    if (q === NEED) return NEED;
    const quoted = q === -1 ? undefined : QUOTED_VALUE.get(q);
    const e = quoted ? run(s, j + 1, quoted, VALUE_MAX, final) : run(s, j, ARGUMENT, VALUE_MAX, final);
    if (e === NEED) return NEED;
    const end = quoted ? e + 1 : e;
    if (end === j || end > s.length) return FAIL;
    const w = run(s, end, SPACE, VALUE_MAX, final);
    if (w === NEED) return NEED;
    if (w === end) return FAIL;
    j = w;
  }
  return j;
}

/** The flag's value from v (quoted or a plain argument), masked from `after`'s first occurrence in it. */
function valueAt(s: string, v: number, after: string | undefined, final: boolean, f: Found, refuse = ''): C.Answer {
  if (v >= s.length) {
    if (final) return NO;
    f.holdFrom = v;
    return MORE;
  }
  const q = s.charCodeAt(v);
  const quoted = QUOTED_VALUE.get(q);
  const from = quoted ? v + 1 : v;
  if (!quoted && (q === DASH || refuse.includes(s[v]))) return NO; // the next flag: the value is asked for at a prompt
  const e = run(s, from, quoted ?? ARGUMENT, VALUE_MAX, final);
  if (e === NEED) {
    f.holdFrom = from;
    return MORE;
  }
  let start = from;
  if (after !== undefined) {
    const k = s.indexOf(after, from);
    if (k < 0 || k >= e) return NO;
    start = k + 1;
  }
  if (e <= start) return NO;
  f.start = start;
  f.end = e;
  return YES;
}
