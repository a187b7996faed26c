#!/usr/bin/env node
// The guard every generated wrapper runs (plain Node, no dependencies). It asks the session's
// runner whether this exact command may run, waits while a person decides, and then either
// runs the real program with the same argv (stdio inherited, its exit status passed on) or
// prints the refusal and exits 1:
//
//   av-guard.mjs <config.json> <program> <$0> [args...]  a wrapped program (git, npm, ...) as invoked
//   av-guard.mjs <config.json> --blocked <rule> <line>    the session's bash refused a line (report only)
//
// The config (written by the runner into the session's home: hook URL, session token, where the
// real programs are) is named on the command line, so `env -i` cannot cut the guard off. When
// the runner cannot be reached the answer is no: fail closed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseObject as parse, post } from '../hooks/hook-client.mjs';

/** A person may take a while; the runner's own expiry answers before this. */
const DECISION_TIMEOUT_MS = 25 * 60 * 60_000;
/** Reports must not hold the shell up. */
const REPORT_TIMEOUT_MS = 5_000;



function refuse(message) {
  process.stderr.write(`${message}\n`);
  return 1;
}

async function main() {
  const [configPath, program, ...rest] = process.argv.slice(2);
  const config = parse(fs.readFileSync(configPath, 'utf8'));
  if (!config || typeof config.url !== 'string' || typeof config.token !== 'string' || !program) {
    return refuse(`agent-village: the guard for ${program ?? 'this program'} is misconfigured; refused`);
  }
  if (program === '--blocked') {
    const [rule = '', line = ''] = rest;
    const body = JSON.stringify({ provider: 'guard', event: 'blocked', payload: { rule, line, cwd: process.cwd() } });
    await post(config.url, config.token, body, REPORT_TIMEOUT_MS, config.socket).catch(() => undefined);
    return 0;
  }
  // git runs its helpers as git-<name> (git-receive-pack, git-upload-pack) through the same binary.
  const [invoked = program, ...args] = rest;
  const invokedAs = path.basename(invoked);
  const argv = program === 'git' && invokedAs.startsWith('git-') ? ['git', invokedAs.slice(4), ...args] : [program, ...args];
  const cwd = process.cwd();
  let reply;
  try {
    const res = await post(config.url, config.token, JSON.stringify({ provider: 'guard', event: 'exec', payload: { argv, cwd } }), DECISION_TIMEOUT_MS, config.socket);
    if (res.status !== 200) return refuse(`agent-village: ${program} refused: the runner answered ${res.status}`);
    reply = parse(parse(res.text)?.stdout ?? '') ?? {};
  } catch (err) {
    return refuse(`agent-village: ${program} refused: cannot reach the runner (${err instanceof Error ? err.message : String(err)})`);
  }
  if (reply.action === 'print' && typeof reply.text === 'string') {
    process.stdout.write(reply.text);
    return 0;
  }
  if (reply.action === 'exec_with_env' && typeof reply.name === 'string' && typeof reply.value === 'string' && Array.isArray(reply.argv) && reply.argv.length > 0) {
    // av-secret NAME -- cmd: the secret reaches only this command (and what it starts), never stdout.
    const [file, ...cmdArgs] = reply.argv.map(String);
    const r = spawnSync(file, cmdArgs, { stdio: 'inherit', env: { ...process.env, [reply.name]: reply.value } });
    if (r.error) return refuse(`agent-village: could not run ${file}: ${r.error.message}`);
    if (r.signal) {
      process.kill(process.pid, r.signal);
      return 128;
    }
    return r.status ?? 1;
  }
  if (reply.action !== 'run') return refuse(typeof reply.message === 'string' ? reply.message : `agent-village: ${program} refused`);
  const real = config.real?.[program];
  if (typeof real !== 'string') return refuse(`agent-village: no real ${program} is known to the guard; refused`);
  const r = spawnSync(real, args, { stdio: 'inherit', argv0: invokedAs });
  if (r.error) return refuse(`agent-village: could not run ${program}: ${r.error.message}`);
  if (r.signal) {
    process.kill(process.pid, r.signal);
    return 128;
  }
  return r.status ?? 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`agent-village: guard failed (${err instanceof Error ? err.message : String(err)}); refused\n`);
    process.exit(1);
  },
);
