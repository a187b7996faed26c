import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONTROL_PLANE_ARGS, CONTROL_PLANE_NODE_FLAGS, MIN_SEMI_SPACE_MB } from './heap-growth';

/**
 * V8's heap limits are per process and tell nothing through an API, so each check runs in a child
 * process: it keeps a live old generation of ~80 MB, collects it (the limit is set from that),
 * then grows it by ~39 MB more and counts the mark-compacts that growth caused. Large double
 * arrays go to the old generation as they are (V8's large-object space), whatever the scavenges do.
 */
function markCompactsWhileGrowing(setup: string): number {
  const script = `
    import v8 from 'node:v8';
    import { PerformanceObserver, constants } from 'node:perf_hooks';
    ${setup}
    const array = () => Array.from({ length: 100_000 }, (_, i) => i + 0.5);
    const live = Array.from({ length: 100 }, array);
    globalThis.gc();
    let majors = 0;
    const seen = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
    });
    await new Promise((resolve) => setImmediate(resolve));
    seen.observe({ entryTypes: ['gc'] });
    for (let i = 0; i < 50; i++) live.push(array());
    // GC entries are delivered on a later turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    seen.disconnect();
    process.stdout.write(String(majors) + ' ' + live.length);
  `;
  const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd(), encoding: 'utf8' });
  const [majors, kept] = out.trim().split(' ').map(Number);
  expect(kept).toBe(150);
  return majors!;
}

describe('giveOldGenerationRoom', () => {
  // V8's own factor depends on how fast this child allocates; in a flood it is its floor, 1.1.
  const floor = `v8.setFlagsFromString('--heap-growing-percent=10');`;

  it('lets the old generation grow by half past its live size without a mark-compact', () => {
    expect(markCompactsWhileGrowing(`${floor} const { giveOldGenerationRoom } = await import('./server/heap-growth.ts'); giveOldGenerationRoom();`)).toBe(0);
  });

  it('is needed: at V8’s floor factor the same growth runs a mark-compact', () => {
    expect(markCompactsWhileGrowing(floor)).toBeGreaterThan(0);
  });
});

/** The young generation's size (V8's new space, one semi-space) in a node started with `flags`. */
function newSpaceBytes(flags: readonly string[]): number {
  const script = `process.stdout.write(String(require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size))`;
  return Number(execFileSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8' }));
}

describe('the control plane’s node flags', () => {
  it('start the young generation at its floor, where node’s default starts it at 1 MB', () => {
    expect(newSpaceBytes(CONTROL_PLANE_NODE_FLAGS)).toBeGreaterThanOrEqual(MIN_SEMI_SPACE_MB * 1024 * 1024);
    expect(newSpaceBytes([])).toBeLessThan(MIN_SEMI_SPACE_MB * 1024 * 1024);
  });

  it('are on npm start’s and npm run dev’s command lines, as tests and benches start it', () => {
    const { scripts } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.start).toBe(`node ${CONTROL_PLANE_ARGS.join(' ')}`);
    expect(scripts.dev).toBe(`NODE_ENV=development node ${CONTROL_PLANE_ARGS.join(' ')}`);
  });
});
