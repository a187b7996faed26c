/**
 * What xterm costs a page per MB at the write cadences a flood can arrive with (the mechanism
 * behind components/terminal/write-pacer.ts): the same bytes at the same rate, handed over
 * 48, 25, 20 and 10 times a second, in rounds so each cadence sees the same load. xterm draws
 * once per frame whose rows changed, so fewer, bigger writes are fewer frames drawn. The page is
 * the one-hop baseline's (bench/one-hop/server.ts: the same xterm and options as the product's);
 * its cost comes from Chromium's counters (bench/live-page-cost.ts), in thread time.
 * Usage: node --import tsx bench/page-writes.ts   (BENCH_MBPS: the flood's rate, 3; BENCH_ROUNDS, 3)
 */
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { chromium } from '@playwright/test';
import { ROOT } from '../server/integration/harness';
import { FLOOD_WRITE_INTERVAL_MS } from '../components/terminal/write-pacer';
import { formatPageCost, startPageCost } from './live-page-cost';

const MBPS = Number(process.env.BENCH_MBPS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** 48 Hz is the product page's unpaced write rate in bench:live at ~5 MB/s; 1000 / FLOOD_WRITE_INTERVAL_MS is the paced one. */
const CADENCES_HZ = [48, 25, 1000 / FLOOD_WRITE_INTERVAL_MS, 10];
/** Seconds of flood per measure. */
const SECONDS = 2.5;
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

async function main() {
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}; ${MBPS} MB/s for ${SECONDS} s per measure; load at start ${load()}`);
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/one-hop/server.ts'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run'],
  });
  try {
    const port = await new Promise<number>((res) => child.stdout!.on('data', (b: Buffer) => /listening on (\d+)/.test(b.toString()) && res(Number(/listening on (\d+)/.exec(b.toString())![1]))));
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForFunction(() => (window as unknown as { __ready?: boolean }).__ready === true);
    const results = new Map<number, number[]>();
    // Round 0 warms the JIT up and is not counted.
    for (let round = 0; round <= ROUNDS; round++) {
      for (const hz of CADENCES_HZ) {
        // The writes are built before the clock starts: only xterm's work is measured.
        await page.evaluate(({ mbps, hz, seconds }) => {
          const per = Math.round((mbps * 1024 * 1024) / hz);
          const enc = new TextEncoder();
          const chunks: Uint8Array[] = [];
          let line = 0;
          for (let i = 0; i < Math.round(hz * seconds); i++) {
            let s = '';
            while (s.length < per) s += `${String(++line).padStart(99, '0')}\r\n`;
            chunks.push(enc.encode(s));
          }
          (window as unknown as { __chunks: Uint8Array[] }).__chunks = chunks;
        }, { mbps: MBPS, hz, seconds: SECONDS });
        const cost = await startPageCost(page);
        const mb = await page.evaluate(async ({ hz }) => {
          const w = window as unknown as { __chunks: Uint8Array[]; __avTerminals: Record<string, { write(d: Uint8Array, cb: () => void): void }> };
          const term = w.__avTerminals['one-hop']!;
          const t0 = performance.now();
          let bytes = 0;
          for (let i = 0; i < w.__chunks.length; i++) {
            const wait = t0 + (i * 1000) / hz - performance.now();
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
            bytes += w.__chunks[i]!.byteLength;
            await new Promise<void>((r) => term.write(w.__chunks[i]!, r));
          }
          return bytes / (1024 * 1024);
        }, { hz });
        const c = await cost.stop();
        if (round === 0) continue;
        results.set(hz, [...(results.get(hz) ?? []), (c.TaskDuration * 1000) / mb]);
        console.log(`round ${round}, writes ${hz.toFixed(0)} a second: ${formatPageCost(c, mb)}; load ${load()}`);
      }
    }
    console.log(`\n| writes a second | page main thread per MB (each round) |\n|---|---|`);
    for (const [hz, xs] of results) console.log(`| ${hz.toFixed(0)}${hz === 1000 / FLOOD_WRITE_INTERVAL_MS ? ' (paced)' : ''} | ${xs.map((x) => x.toFixed(0)).join(' / ')} ms |`);
    console.log(`\nload average at the end: ${load()}`);
  } finally {
    await browser.close();
    child.kill();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
