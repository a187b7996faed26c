#!/usr/bin/env node
// The program the agent CLIs' hook configs call (plain Node, no dependencies, so it starts fast).
// It forwards one hook call to the session's runner and relays the runner's answer:
//
//   av-hook.mjs claude|codex|gemini      hook JSON on stdin (Claude Code / Codex / Gemini CLI hooks)
//   av-hook.mjs codex-notify <json>      Codex's `notify` program: the JSON is the last argument
//   av-hook.mjs shell <event> <text>     the session's bash (preexec: command line, precmd: exit status)
//
// Endpoint and token come from AGENT_VILLAGE_HOOK_URL / AGENT_VILLAGE_SESSION_TOKEN in the session's
// environment. When the runner cannot be reached the hook prints nothing and exits 0: the CLI then
// goes on as if no hook were configured (its own permission prompts still apply).
import { parseObject, post } from './hook-client.mjs';

/** Hooks that only report must never slow the agent down noticeably. */
const REPORT_TIMEOUT_MS = 5_000;
/** Hooks that decide (PreToolUse, BeforeTool) may wait for a person's approval. */
const DECISION_TIMEOUT_MS = 25 * 60_000;
/** The CLIs write the hook JSON and close stdin at once; a stdin that never closes is not a hook call. */
const STDIN_TIMEOUT_MS = 5_000;
const DECISION_EVENTS = new Set(['PreToolUse', 'BeforeTool', 'PermissionRequest']);

function readStdin() {
  return new Promise((resolve) => {
    if (process.stdin.isTTY) return resolve('');
    const chunks = [];
    const timer = setTimeout(() => {
      process.stdin.destroy();
      resolve(Buffer.concat(chunks).toString('utf8'));
    }, STDIN_TIMEOUT_MS);
    process.stdin.on('data', (c) => chunks.push(c));
    process.stdin.on('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    process.stdin.on('error', () => {
      clearTimeout(timer);
      resolve('');
    });
  });
}


async function buildCall(argv) {
  const [mode, ...rest] = argv;
  if (mode === 'codex-notify') {
    const payload = parseObject(rest.at(-1) ?? '');
    return payload ? { provider: 'codex', event: 'notify', payload } : null;
  }
  if (mode === 'shell') {
    const [event, text = ''] = rest;
    return event ? { provider: 'shell', event, payload: { text } } : null;
  }
  if (mode === 'claude' || mode === 'codex' || mode === 'gemini') {
    const payload = parseObject(await readStdin());
    if (!payload) return null;
    const event = typeof payload.hook_event_name === 'string' ? payload.hook_event_name : 'unknown';
    return { provider: mode, event, payload };
  }
  return null;
}


async function main() {
  const url = process.env.AGENT_VILLAGE_HOOK_URL;
  // The session token (scoped to this session, dies with it); the bash hooks pass it under the old name.
  const token = process.env.AGENT_VILLAGE_SESSION_TOKEN || process.env.AGENT_VILLAGE_HOOK_TOKEN;
  const call = await buildCall(process.argv.slice(2));
  if (!url || !token || !call) return 0;
  const timeout = DECISION_EVENTS.has(call.event) ? DECISION_TIMEOUT_MS : REPORT_TIMEOUT_MS;
  try {
    const res = await post(url, token, JSON.stringify(call), timeout, process.env.AGENT_VILLAGE_HOOK_SOCKET || undefined);
    if (res.status !== 200) {
      process.stderr.write(`agent-village hook: runner answered ${res.status}\n`);
      return 0;
    }
    const reply = parseObject(res.text) ?? {};
    if (typeof reply.stdout === 'string' && reply.stdout) process.stdout.write(reply.stdout);
    return Number.isInteger(reply.exit_code) ? reply.exit_code : 0;
  } catch (err) {
    process.stderr.write(`agent-village hook: ${err instanceof Error ? err.message : String(err)}\n`);
    return 0;
  }
}

// Exit as soon as stdout is flushed: a kept-alive socket must not hold the agent's hook call open.
const finish = (code) => process.stdout.write('', () => process.exit(code));
main().then(finish, () => finish(0));
