/**
 * A password piped into a registry login: `echo PW | docker login -u me --password-stdin`,
 * `printf '%s' PW | helm registry login …`, `cat <<<PW | oras login …`. The secret comes before the
 * tool that makes it one, so it is masked only when the whole line is in the text the rule reads
 * (wholeOnly: a script's output, xtrace, a pasted command, a log). Holding the literal until the
 * pipe and the tool decide it would hold the argument of every typed `echo` until the next word,
 * and no timer may release held text: `echo hello` would show `hello` only with the next key. A
 * variable (`echo $PW`, `echo "$PW"`) is not a secret. Bash's xtrace prints a pipeline's commands
 * on lines of their own: `+ echo PW` followed by `+ docker login …` is read the same way.
 */
import * as C from '../../chars';
import type { Found, Rule } from '../../rule';
import { LOGIN_TOOL_NAMES } from './cli-flags';
import * as S from './shared';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call.
const { chars, FAIL, lit, NEED, NO, peek, run, SPACE } = C;
const { QUOTED_VALUE, fakePassword, lineBefore, yes } = S;

/** An unquoted argument: up to whitespace, a quote or what ends a shell command. */
const ARGUMENT = chars(` \t\r\n'"\`;&|<>()${C.CONTROL}`, true);
const WORD = chars(` \t\r\n;&|${C.CONTROL}`, true);
const ECHO_FLAGS = chars('neE');
const VALUE_MAX = 512;
/** Words between the tool and `login`: `helm registry login`, `docker --config ~/.d login`. */
const WORDS_BEFORE_LOGIN = 4;
const WORD_MAX = 128;
const TOOLS = new Set(LOGIN_TOOL_NAMES);
/** Unquoted, these start no literal: a variable, a substitution, a flag, a redirection. */
const NOT_LITERAL = new Set([36, 45, 60, 62, 40, 96]); // $ - < > ( `
const PIPE = 124;
const PLUS = 43;
const PLUSES = chars('+');
const LINE_END = chars('\r\n');
const XTRACE = /^\++ $/;

/** Where the literal argument of `echo` / `printf` / `cat <<<` at i starts (FAIL, NEED). */
function literalStart(s: string, i: number, final: boolean): number {
  let j = lit(s, i, 'echo ', final);
  if (j >= 0) {
    // `echo -n PW`, `echo -ne PW`.
    for (;;) {
      j = run(s, j, SPACE, 9, final);
      if (j === NEED) return NEED;
      const c = peek(s, j, final);
      if (c === NEED) return NEED;
      if (c !== 45) return j;
      const e = run(s, j + 1, ECHO_FLAGS, 3, final);
      if (e === NEED) return NEED;
      const w = peek(s, e, final);
      if (w === NEED) return NEED;
      if (e === j + 1 || (w !== 32 && w !== 9)) return j; // not a flag: `-` starts no literal
      j = e;
    }
  }
  if (j === NEED) return NEED;
  j = lit(s, i, 'printf ', final);
  if (j >= 0) {
    j = run(s, j, SPACE, 9, final);
    if (j === NEED) return NEED;
    const q = peek(s, j, final);
    if (q === NEED) return NEED;
    const quoted = q === -1 ? undefined : QUOTED_VALUE.get(q);
    if (quoted === undefined) return j;
    // `printf '%s' PW`: a quoted format with a conversion is followed by the literal.
    const e = run(s, j + 1, quoted, VALUE_MAX, final);
    if (e === NEED) return NEED;
    if (s.indexOf('%', j + 1) < 0 || s.indexOf('%', j + 1) >= e) return j;
    const w = run(s, e + 1, SPACE, 9, final);
    return w === NEED ? NEED : w === e + 1 ? FAIL : w;
  }
  if (j === NEED) return NEED;
  j = lit(s, i, 'cat <<<', final);
  if (j < 0) return j;
  return run(s, j, SPACE, 9, final);
}

/** From j: `| [sudo] TOOL … login`, or (after `+ echo PW`) a next xtrace line `+ TOOL … login`. */
function pipedToLogin(s: string, j: number, final: boolean, xtrace: boolean): number {
  let k = run(s, j, SPACE, 9, final);
  if (k === NEED) return NEED;
  let c = peek(s, k, final);
  if (c === NEED) return NEED;
  if (c === PIPE) {
    const d = peek(s, k + 1, final);
    if (d === NEED) return NEED;
    if (d === PIPE) return FAIL; // `||`
    k = run(s, k + 1, SPACE, 9, final);
  } else if (xtrace && (c === 13 || c === 10)) {
    k = run(s, k, LINE_END, 2, final);
    if (k === NEED) return NEED;
    c = peek(s, k, final);
    if (c === NEED) return NEED;
    if (c !== PLUS) return FAIL;
    k = run(s, k, PLUSES, 9, final);
    if (k === NEED) return NEED;
    k = lit(s, k, ' ', final);
  } else return FAIL;
  if (k < 0) return k;
  let tool = false;
  for (let w = 0; w < WORDS_BEFORE_LOGIN + 2; w++) {
    const e = run(s, k, WORD, WORD_MAX, final);
    if (e === NEED) return NEED;
    if (e === k) return FAIL;
    const word = s.slice(k, e);
    if (tool) {
      if (word === 'login') return e;
    } else if (TOOLS.has(word)) tool = true;
    else if (w > 0 || word !== 'sudo') return FAIL;
    const next = peek(s, e, final);
    if (next === NEED) return NEED;
    if (next !== 32 && next !== 9) return FAIL;
    k = run(s, e, SPACE, 9, final);
    if (k === NEED) return NEED;
  }
  return FAIL;
}

export const stdinLoginRule: Rule = {
  name: 'stdin-login-password',
  provider: 'container registries',
  source: 'https://docs.docker.com/reference/cli/docker/login/#password-stdin',
  format: /\b(echo(\s+-[neE]+)*|printf(\s+(['"])[^'"]*%[^'"]*\4)?|cat\s+<<<)\s*(['"]?)[^\s$'"|;&][^\s'"|;&]*\5\s*\|\s*(sudo\s+)?(docker|podman|nerdctl|buildah|skopeo|helm|oras|crane|regctl)\b.*\blogin\b/,
  maxLength: VALUE_MAX,
  first: 'epc',
  notAfter: chars('A-Za-z0-9_./$-'),
  prefixes: ['echo ', 'printf ', 'cat <<<'],
  wholeOnly: true,
  example(r) {
    const secret = fakePassword(r);
    const text = r.pick([
      `$ echo ${secret} | docker login -u deploy --password-stdin registry.example.com`,
      `$ echo -n '${secret}' | podman login quay.io -u bot --password-stdin`,
      `$ printf '%s' "${secret}" | helm registry login ghcr.io -u me --password-stdin`,
      `$ cat <<<${secret} | oras login -u me --password-stdin r.example.com`,
      `$ echo "${secret}" | crane auth login ghcr.io -u me --password-stdin`,
    ]);
    return { text, secret };
  },
  match(s, i, final, f) {
    const vs0 = literalStart(s, i, final);
    // The line is not whole in the text (wholeOnly): nothing is held.
    if (vs0 === NEED || vs0 === FAIL) return NO;
    return literalPiped(s, i, vs0, final, f);
  },
};

/** The literal at v (quoted or plain), masked if it is piped into a registry login; NO while the line is incomplete. */
function literalPiped(s: string, i: number, v: number, final: boolean, f: Found): C.Answer {
  const q = peek(s, v, final);
  if (q === NEED) return NO;
  if (q === -1 || NOT_LITERAL.has(q)) return NO;
  const quoted = QUOTED_VALUE.get(q);
  const vs = quoted ? v + 1 : v;
  const ve = run(s, vs, quoted ?? ARGUMENT, VALUE_MAX, final);
  if (ve === NEED) return NO;
  if (ve === vs || (quoted && q === 34 && s.charCodeAt(vs) === 36)) return NO; // "" or "$VAR"
  const after = quoted ? lit(s, ve, String.fromCharCode(q), final) : ve;
  if (after === NEED) return NO;
  if (after === FAIL) return NO;
  const xtrace = XTRACE.test(lineBefore(s, i));
  const e = pipedToLogin(s, after, final, xtrace);
  if (e === NEED) return NO;
  return e === FAIL ? NO : yes(f, vs, ve);
}
