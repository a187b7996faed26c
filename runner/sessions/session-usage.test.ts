import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCommand, outputOf, waitFor } from '../testing/fixtures';
import { eventsOf, makeSessionHarness, type SessionHarness } from '../testing/session-harness';

describe("a session's usage counts its terminal output in bytes", () => {
  let h: SessionHarness;
  beforeEach(async () => {
    h = await makeSessionHarness('usage-bytes');
  });
  afterEach(() => h.close());

  it('USAGE_TICKs add up to the UTF-8 size of every chunk sent, multi-byte characters included', async () => {
    const cmd = createCommand({ repo_source: h.source });
    const sid = cmd.session_id;
    expect(h.manager.create(cmd).ok).toBe(true);
    await waitFor(() => /[#$] /.test(outputOf(h.events, sid)), 'prompt');
    // Two- to four-byte characters: a count of characters would be ~2.5 times too small.
    h.manager.input({ session_id: sid, data: "for i in $(seq 1 400); do echo 'é€😀 ok'; done; exit", mode: 'line' });
    await waitFor(() => eventsOf(h.events, sid, 'SESSION_STATE_CHANGED').some((e) => e.to === 'COMPLETED' || e.to === 'FAILED'), 'the end');
    const bytes = Buffer.byteLength(outputOf(h.events, sid), 'utf8');
    const ticks = eventsOf(h.events, sid, 'USAGE_TICK');
    const kb = ticks.reduce((n, t) => n + t.units.terminal_kb, 0);
    expect(bytes).toBeGreaterThan(400 * 12);
    // Each tick rounds to 3 decimals.
    expect(Math.abs(kb - bytes / 1024)).toBeLessThan(0.001 * ticks.length);
  });
});
