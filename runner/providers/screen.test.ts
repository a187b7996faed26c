import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGENT_GATE, agentGateText } from '../../protocol';
import { CLAUDE_SCREEN_RULES } from './claude';
import { CODEX_SCREEN_RULES } from './codex';
import { GEMINI_SCREEN_RULES } from './gemini';
import { lastMeaningfulLine, meaningfulText, Screen } from './screen';
import { detectGate, ScreenWatch } from './screen-watch';

/** Raw PTY bytes the real CLIs wrote in a fresh home on this offline machine (120×40), see screens/. */
const raw = (name: string) => fs.readFileSync(new URL(`./screens/${name}.raw`, import.meta.url), 'utf8');

async function screenOf(name: string): Promise<Screen> {
  const s = new Screen(120, 40);
  s.write(raw(name));
  await s.settled();
  return s;
}

describe('meaningful lines', () => {
  it('drops blank, box-drawing and spinner lines; trims borders', () => {
    expect(meaningfulText('   ')).toBeNull();
    expect(meaningfulText('╭──────────╮')).toBeNull();
    expect(meaningfulText('────────────')).toBeNull();
    expect(meaningfulText('│ Do you trust the files in this folder?      │')).toBe('Do you trust the files in this folder?');
    expect(meaningfulText('  ⠧  ')).toBeNull();
  });

  it('prefers the last error among the last lines over a trailing tip or URL', () => {
    expect(lastMeaningfulLine(['Starting', 'Error: boom', 'see https://example.com/help', '──────'])).toBe('Error: boom');
    expect(lastMeaningfulLine(['one', 'two', ''])).toBe('two');
    expect(lastMeaningfulLine(['', '╰───╯'])).toBeNull();
  });
});

describe('real first-run screens', () => {
  it('Claude Code offline in a fresh home: the quoted line names the host and the error', async () => {
    const s = await screenOf('claude-first-run-offline');
    expect(lastMeaningfulLine(s.allLines())).toBe('Failed to connect to api.anthropic.com: ENOTFOUND');
    expect(detectGate('claude', CLAUDE_SCREEN_RULES, s.visibleLines())?.kind).toBe('unreachable');
    s.dispose();
  });

  it('Codex without a sign-in: "needs sign-in: codex"', async () => {
    const s = await screenOf('codex-sign-in');
    expect(detectGate('codex', CODEX_SCREEN_RULES, s.visibleLines())).toEqual({ kind: 'signIn', detail: `${AGENT_GATE.signIn}: codex` });
    s.dispose();
  });

  it('Gemini in an untrusted folder: waiting for your answer, quoting the question', async () => {
    const s = await screenOf('gemini-folder-trust');
    expect(detectGate('gemini', GEMINI_SCREEN_RULES, s.visibleLines())).toEqual({ kind: 'answer', detail: `${AGENT_GATE.answer}: Do you trust the files in this folder?` });
    s.dispose();
  });

  it('Gemini after its retries: the API error line', async () => {
    const s = await screenOf('gemini-unreachable');
    const gate = detectGate('gemini', GEMINI_SCREEN_RULES, s.visibleLines());
    expect(gate?.kind).toBe('unreachable');
    expect(gate?.detail).toBe(`${AGENT_GATE.unreachable}: ✕ [API Error: exception TypeError: fetch failed sending request]`);
    s.dispose();
  });

  it('the watcher reports a gate once, and its passing', async () => {
    const seen: (string | null)[] = [];
    const w = new ScreenWatch('codex', CODEX_SCREEN_RULES, { cols: 120, rows: 40 }, (g) => seen.push(g?.detail ?? null), 5);
    w.push(raw('codex-sign-in'));
    await waitUntil(() => seen.length === 1);
    w.push(raw('codex-sign-in'));
    // The screen clears and shows something else: the gate is gone.
    w.push('\x1b[2J\x1b[Hworking on it');
    await waitUntil(() => seen.length === 2);
    expect(seen).toEqual([`${AGENT_GATE.signIn}: codex`, null]);
    expect(await w.lastLine()).toBe('working on it');
    w.close();
  });

  it('the village shows gate details as they are and nothing else', () => {
    expect(agentGateText('needs sign-in: codex')).toBe('needs sign-in: codex');
    expect(agentGateText('turn ended: done')).toBeNull();
    expect(agentGateText(null)).toBeNull();
  });
});

async function waitUntil(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
}
