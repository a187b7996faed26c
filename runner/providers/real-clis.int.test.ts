import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { AGENT_GATE, type ProviderId, type RunnerEvent } from '../../protocol';
import { createCommand, outputOf, waitFor } from '../testing/fixtures';
import { eventsOf, makeSessionHarness, type SessionHarness } from '../testing/session-harness';
import { claudeProvider } from './claude';
import { binOverrideEnv } from './cli';
import { codexProvider } from './codex';
import { geminiProvider } from './gemini';
import type { ProviderAdapter } from './types';

/**
 * The real agent CLIs (pinned, installed by scripts/install-agent-clis.sh into .agent-clis/)
 * started through their adapters in a fresh session home, with an obviously fake API key and no
 * network: no sign-in, trust or onboarding screen may appear, our hooks must be received, and the
 * CLI's own "cannot reach the API" message must reach the sprite's reason. The key must never
 * show in events, spool or logs.
 */

const CLI_BIN = fileURLToPath(new URL('../../.agent-clis/node_modules/.bin/', import.meta.url));
/** How long each CLI may take to say its API is unreachable (DNS fails at once here; the rest is start-up on a loaded machine). */
const UNREACHABLE_TIMEOUT_MS: Record<string, number> = { claude: 120_000, codex: 120_000, gemini: 180_000 };
const START_TIMEOUT_MS = 60_000;
/**
 * The control plane acks terminal output for a session nobody watches (server/services/events.ts);
 * without acks the runner pauses the PTY at its high watermark, and a TUI whose spinner repaints
 * in true colour (Gemini, ~25 KB/s) would block there after half a minute.
 */
const CONTROL_PLANE_ACK_MS = 100;

interface Case {
  id: Exclude<ProviderId, 'shell'>;
  make: (env: Record<string, string>) => ProviderAdapter;
  secrets: Record<string, string>;
}

const FAKE = 'fake-village-key-0000-not-a-real-secret-7f3a9c';
const CASES: Case[] = [
  { id: 'claude', make: (env) => claudeProvider(env), secrets: { ANTHROPIC_API_KEY: `sk-ant-api03-${FAKE}` } },
  { id: 'codex', make: (env) => codexProvider(env), secrets: { OPENAI_API_KEY: `sk-proj-${FAKE}` } },
  // Gemini retries ten times with backoff (about six minutes) before it says so; one attempt shows the same end.
  { id: 'gemini', make: (env) => geminiProvider(env, { maxChatAttempts: 1 }), secrets: { GEMINI_API_KEY: `AIzaSy-${FAKE}` } },
];

const gateDetails = (events: RunnerEvent[], sid: string) => eventsOf(events, sid, 'AGENT_ACTIVITY').map((e) => e.detail);

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(path.join(entry.parentPath, entry.name));
  }
  return out;
}

for (const c of CASES) {
  const bin = path.join(CLI_BIN, c.id);
  const installed = fs.existsSync(bin);
  describe.skipIf(!installed)(`real ${c.id} CLI through its adapter${installed ? '' : ` (skipped: ${bin} is not installed; run scripts/install-agent-clis.sh)`}`, () => {
    let h: SessionHarness | null = null;
    afterEach(async () => {
      await h?.close();
      h = null;
    });

    it('starts on its goal with no first-run gate, its hooks are received, and the unreachable API is quoted', { timeout: UNREACHABLE_TIMEOUT_MS[c.id] + START_TIMEOUT_MS }, async () => {
      const adapter = c.make({ PATH: process.env.PATH ?? '', [binOverrideEnv(c.id)]: bin });
      h = await makeSessionHarness(`real-${c.id}`, { hooks: true, providers: [adapter] });
      const cmd = createCommand({ repo_source: h.source, provider: c.id, secrets: c.secrets, cols: 120, rows: 40, task: { title: 'Say hello', goal: 'Reply with one word.' } });
      const sid = cmd.session_id;
      expect(h.manager.create(cmd).ok).toBe(true);
      const harness = h;
      const acker = setInterval(() => {
        const last = harness.events.findLast((e) => e.session_id === sid);
        if (last) harness.manager.terminalAck({ session_id: sid, seq: last.seq });
      }, CONTROL_PLANE_ACK_MS);
      try {
        // The goal went in as the first prompt: the prompt hook (UserPromptSubmit / BeforeAgent) fired before any network.
        await waitFor(() => gateDetails(harness.events, sid).includes('working on a prompt'), `${c.id}: prompt hook`, START_TIMEOUT_MS);
        // The CLI's own words for the unreachable API, on the sprite.
        const unreachable = await waitFor(
          () => gateDetails(harness.events, sid).find((d) => d.startsWith(AGENT_GATE.unreachable)),
          `${c.id}: cannot reach its API`,
          UNREACHABLE_TIMEOUT_MS[c.id],
        ).catch((err: unknown) => {
          // What the sprite said and what the screen showed, to see which gate or message was missed.
          throw new Error(`${String(err)}\nactivity: ${JSON.stringify(gateDetails(harness.events, sid))}\nscreen tail: ${JSON.stringify(outputOf(harness.events, sid).slice(-3000))}`);
        });
        expect(unreachable).toMatch(/ENOTFOUND|lookup address|fetch failed|reach/i);

        const details = gateDetails(harness.events, sid);
        expect(details.filter((d) => d.startsWith(AGENT_GATE.signIn) || d.startsWith(AGENT_GATE.answer) || d.startsWith(AGENT_GATE.configError))).toEqual([]);
        const screen = outputOf(harness.events, sid);
        expect(screen).not.toMatch(/Do you trust|Trust this folder|Sign in with ChatGPT|Select login method|Do you want to use this API key|Error in .*settings\.json|Choose the text style/);
        expect(screen).toContain('Say hello');

        harness.manager.stop({ session_id: sid });
        await waitFor(() => eventsOf(harness.events, sid, 'SESSION_STATE_CHANGED').some((e) => e.to === 'COMPLETED' || e.to === 'FAILED'), 'final state');
        // Nothing the runner keeps or sends holds the key (the session's home, with the CLI's own files, is gone).
        const key = Object.values(c.secrets)[0];
        expect(JSON.stringify(harness.events)).not.toContain(key);
        expect(harness.logLines.join('\n')).not.toContain(key);
        expect(harness.logLines.some((l) => l.includes(`session ${sid}`))).toBe(true);
        for (const file of filesUnder(harness.tmp)) expect(fs.readFileSync(file, 'latin1').includes(key), file).toBe(false);
      } finally {
        clearInterval(acker);
      }
    });
  });
}

const claudeBin = path.join(CLI_BIN, 'claude');
describe.skipIf(!fs.existsSync(claudeBin))('real claude CLI exiting early', () => {
  let h: SessionHarness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it('without its first-run answers it checks the network, exits 1, and the session reason quotes why', { timeout: UNREACHABLE_TIMEOUT_MS.claude + START_TIMEOUT_MS }, async () => {
    // The adapter minus ~/.claude.json: what the issue saw ("exited with code 1" and nothing else).
    const real = claudeProvider({ PATH: process.env.PATH ?? '', [binOverrideEnv('claude')]: claudeBin });
    const unseeded: ProviderAdapter = {
      ...real,
      async prepare(ctx) {
        await real.prepare?.(ctx);
        fs.rmSync(path.join(ctx.home, '.claude.json'));
      },
    };
    h = await makeSessionHarness('real-claude-exit', { hooks: true, providers: [unseeded] });
    const cmd = createCommand({ repo_source: h.source, provider: 'claude', secrets: CASES[0].secrets, cols: 120, rows: 40, task: { title: 'Say hello' } });
    const sid = cmd.session_id;
    expect(h.manager.create(cmd).ok).toBe(true);
    const harness = h;
    const end = await waitFor(
      () => eventsOf(harness.events, sid, 'SESSION_STATE_CHANGED').find((e) => e.to === 'COMPLETED' || e.to === 'FAILED'),
      'claude exits',
      UNREACHABLE_TIMEOUT_MS.claude,
    );
    expect(end.to).toBe('FAILED');
    expect(end.reason).toBe('exited with code 1: Failed to connect to api.anthropic.com: ENOTFOUND');
  });
});
