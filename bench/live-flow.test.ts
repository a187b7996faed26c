import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pausedBetween } from './live-flow';

const log = (rows: Array<[number, boolean]>) => rows.map(([t, paused]) => JSON.stringify({ t, paused, backlog: 0 })).join('\n') + '\n';

describe('PTY paused time in a throughput run (bench/live-flow.ts)', () => {
  it('sums the paused stretches inside the window, cut at its edges, per process log', () => {
    const dir = mkdtempSync(join(tmpdir(), 'live-flow-test-'));
    // Paused before the run and resumed inside it; paused and resumed inside; paused at the end and never resumed.
    writeFileSync(join(dir, 'flow-1.jsonl'), log([[50, true], [150, false], [300, true], [400, false], [900, true]]));
    writeFileSync(join(dir, 'one-hop-2.jsonl'), log([[200, true], [260, false]]));
    expect(pausedBetween(dir, 'flow-', 100, 1000)).toEqual({ ms: 50 + 100 + 100, pauses: 2 });
    expect(pausedBetween(dir, 'one-hop-', 100, 1000)).toEqual({ ms: 60, pauses: 1 });
    expect(pausedBetween(dir, 'flow-', 500, 800)).toEqual({ ms: 0, pauses: 0 });
  });
});
