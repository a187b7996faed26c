import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AGENT_GATE, type RunnerEvent } from '../../protocol';
import { demoRepoFiles, FAKE_CLAUDE_PATH } from '../testing/demo-repo';
import { createCommand, waitFor } from '../testing/fixtures';
import { eventsOf, makeSessionHarness, type SessionHarness } from '../testing/session-harness';
import { claudeProvider } from './claude';
import type { ProviderAdapter } from './types';

/**
 * The fake agent asks what the real Claude Code asks on first run (text style, folder trust, an
 * API key from the environment) unless ~/.claude.json answers it. Through a real session: the
 * adapter's pre-seeding keeps every gate away; without it, the sprite names each gate, and an
 * early exit is explained by the agent's own last line.
 */

const SCRIPT_TIMEOUT_MS = 30_000;
const env = { PATH: process.env.PATH ?? '', AGENT_RUNNER_CLAUDE_BIN: FAKE_CLAUDE_PATH };
const KEY = 'sk-ant-api03-fake-first-run-key-000000000000';

/** The claude adapter minus its first-run answers: what a fresh HOME looks like to the CLI. */
function unseeded(): ProviderAdapter {
  const real = claudeProvider(env);
  return {
    ...real,
    async prepare(ctx) {
      await real.prepare?.(ctx);
      fs.rmSync(path.join(ctx.home, '.claude.json'));
    },
  };
}

const details = (events: RunnerEvent[], sid: string) => eventsOf(events, sid, 'AGENT_ACTIVITY').map((e) => e.detail);
const final = (events: RunnerEvent[], sid: string) => eventsOf(events, sid, 'SESSION_STATE_CHANGED').find((e) => e.to === 'COMPLETED' || e.to === 'FAILED');

describe('first-run gates of an agent CLI (fake Claude Code, real PTY and hooks)', () => {
  let h: SessionHarness;
  afterEach(() => h.close());

  describe('with the adapter pre-seeding the session home', () => {
    beforeEach(async () => {
      h = await makeSessionHarness('first-run-seeded', { repoFiles: demoRepoFiles(), hooks: true, providers: [claudeProvider(env)] });
    });

    it('the goal goes in as the first prompt: no gate appears, even with an API key in the environment', { timeout: 60_000 }, async () => {
      const cmd = createCommand({ repo_source: h.source, provider: 'claude', room_path: 'src', secrets: { ANTHROPIC_API_KEY: KEY }, task: { title: 'Tidy the lamps' } });
      const sid = cmd.session_id;
      expect(h.manager.create(cmd).ok).toBe(true);
      await waitFor(() => details(h.events, sid).some((d) => d.startsWith('turn ended')), 'turn ended', SCRIPT_TIMEOUT_MS);
      expect(details(h.events, sid)[0]).toBe('working on a prompt');
      expect(details(h.events, sid).filter((d) => d.startsWith(AGENT_GATE.answer) || d.startsWith(AGENT_GATE.signIn))).toEqual([]);
      expect(JSON.stringify(h.events)).not.toContain(KEY);
    });
  });

  describe('without pre-seeding', () => {
    beforeEach(async () => {
      h = await makeSessionHarness('first-run-unseeded', { repoFiles: demoRepoFiles(), hooks: true, providers: [unseeded()] });
    });

    it('the sprite names each question; declining trust ends the session with the agent\'s own words', { timeout: 60_000 }, async () => {
      const cmd = createCommand({ repo_source: h.source, provider: 'claude', task: { title: 'Tidy the lamps' } });
      const sid = cmd.session_id;
      expect(h.manager.create(cmd).ok).toBe(true);
      await waitFor(() => details(h.events, sid).includes(`${AGENT_GATE.answer}: Choose the text style that looks best with your terminal`), 'theme question', SCRIPT_TIMEOUT_MS);
      expect(h.manager.input({ session_id: sid, data: '1', mode: 'line' }).ok).toBe(true);
      await waitFor(() => details(h.events, sid).includes(`${AGENT_GATE.answer}: Do you trust the files in this folder?`), 'trust question', SCRIPT_TIMEOUT_MS);
      expect(h.manager.input({ session_id: sid, data: '2', mode: 'line' }).ok).toBe(true);
      const end = await waitFor(() => final(h.events, sid), 'final state', SCRIPT_TIMEOUT_MS);
      expect(end.to).toBe('FAILED');
      expect(end.reason).toBe('exited with code 1: Error: the folder was not trusted; Claude Code cannot work in it');
      expect(end.exit_code).toBe(1);
    });
  });
});
