/**
 * Terminal benchmarks through the whole product: real server, attached runner, real PTY, and
 * Debian's Chromium running the real page. Prints figures; asserts nothing about time.
 *   (a) spawn → first terminal byte in the browser (click "Spawn agent" → first chunk reaches xterm)
 *   (b) throughput PTY → browser xterm for 64 MB printed by the shell, with a checksum of what xterm was given
 * Usage: npm run bench   (needs `npm run build` first and /usr/bin/chromium)
 */
import { chromium } from '@playwright/test';
import { Api, startStack, waitFor } from '../server/integration/harness';

const SPAWN_RUNS = 5;
const THROUGHPUT_MB = Number(process.env.BENCH_MB ?? 64);

/** FNV-1a over UTF-16 code units: cheap enough to run in the page on 64 MB. */
function fnv1a(s: string, h = 0x811c9dc5): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const stack = await startStack();
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run', '--disable-quic'],
  });
  try {
    const api = new Api(stack.url);
    await api.setupAdmin();
    await api.readyRepo();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const [name, value] = api.cookie.split('=');
    await context.addCookies([{ name: name!, value: value!, url: stack.url }]);
    const page = await context.newPage();
    await page.goto(stack.url);
    await page.getByRole('button', { name: 'Spawn agent' }).waitFor();

    // (a) spawn → first byte, several times.
    const spawnTimes: number[] = [];
    for (let i = 0; i < SPAWN_RUNS; i++) {
      const known = (await api.world()).sessions.map((s) => s.id);
      await page.evaluate((old) => {
        const w = window as unknown as { __firstChunk?: number; __avOnChunk?: (id: string, d: string | Uint8Array) => void };
        w.__firstChunk = undefined;
        // Only the new session's first byte counts, not late output of earlier ones.
        w.__avOnChunk = (id) => {
          if (!old.includes(id)) w.__firstChunk ??= performance.now();
        };
      }, known);
      const t0 = await page.evaluate(() => performance.now());
      await page.getByRole('button', { name: 'Spawn agent' }).click();
      const t1 = await waitFor(() => page.evaluate(() => (window as unknown as { __firstChunk?: number }).__firstChunk), 'first chunk');
      spawnTimes.push(t1 - t0);
      if (i < SPAWN_RUNS - 1) {
        for (const s of (await api.world()).sessions.filter((x) => x.state !== 'COMPLETED' && x.state !== 'FAILED')) {
          await api.ok('POST', `/api/sessions/${s.id}/stop`);
        }
      }
    }
    console.log(`spawn → first terminal byte in the browser: median ${median(spawnTimes).toFixed(0)} ms (runs: ${spawnTimes.map((t) => t.toFixed(0)).join(', ')} ms)`);

    // (b) throughput: 64 MB of one line repeated, printed by the shell itself between two
    // control-character markers. Not `cat` of a file the bench writes: the session's shell runs in
    // the runner's sandbox (runner/sandbox/bwrap.ts) with a private /tmp, where the bench's data
    // folder is not, so `cat` printed "No such file or directory" and the checksum said MISMATCH.
    const line = 'Agent Village throughput line: the quick brown fox jumps over the lazy dog 0123456789';
    const lines = Math.ceil((THROUGHPUT_MB * 1024 * 1024) / (line.length + 1));
    const content = `${line}\r\n`.repeat(lines);
    const expected = fnv1a(content);
    await page.locator('.terminal-panel[data-phase="live"]').waitFor({ timeout: 30_000 });
    await page.evaluate(() => {
      const w = window as unknown as Record<string, unknown> & { __avOnChunk?: (id: string, d: string | Uint8Array) => void };
      const st = { inside: false, done: false, hash: 0x811c9dc5, chars: 0, t0: 0, t1: 0 };
      w.__bench = st;
      const decoder = new TextDecoder();
      w.__avOnChunk = (_id, d) => {
        // Live output comes as bytes (binary frames); the hash is over the text.
        let s = typeof d === 'string' ? d : decoder.decode(d);
        if (!st.inside) {
          const i = s.indexOf('\x02');
          if (i < 0) return;
          st.inside = true;
          st.t0 = performance.now();
          s = s.slice(i + 1);
        }
        if (st.done) return;
        const j = s.indexOf('\x03');
        const part = j >= 0 ? s.slice(0, j) : s;
        let h = st.hash;
        for (let k = 0; k < part.length; k++) {
          h ^= part.charCodeAt(k);
          h = Math.imul(h, 0x01000193) >>> 0;
        }
        st.hash = h;
        st.chars += part.length;
        if (j >= 0) {
          st.done = true;
          // Stop the clock when xterm has parsed everything it was given.
          const term = Object.values((window as unknown as { __avTerminals: Record<string, { write(d: string, cb: () => void): void }> }).__avTerminals)[0]!;
          term.write('', () => (st.t1 = performance.now()));
        }
      };
    });
    await page.locator('.terminal-panel .xterm').click();
    await page.keyboard.type(`printf '\\002'; yes '${line}' | head -n ${lines}; printf '\\003'`);
    await page.keyboard.press('Enter');
    const st = await waitFor(
      () => page.evaluate(() => {
        const s = (window as unknown as { __bench: { t1: number; hash: number; chars: number; t0: number } }).__bench;
        return s.t1 ? s : null;
      }),
      'throughput run',
      600_000,
    );
    // (c) `yes`, then Ctrl-C: how long until the prompt is back on the browser's screen.
    await page.evaluate(() => {
      const w = window as unknown as Record<string, unknown> & { __avOnChunk?: (id: string, d: string | Uint8Array) => void };
      const c = { armed: false, text: '', t0: 0, t1: 0 };
      w.__ctrlc = c;
      w.__avOnChunk = (_id, d) => {
        if (!c.armed || c.t1) return;
        c.text = (c.text + (typeof d === 'string' ? d : new TextDecoder().decode(d))).slice(-4096);
        if (/\^C[\s\S]*[#$] $/.test(c.text)) {
          const term = Object.values((window as unknown as { __avTerminals: Record<string, { write(d: string, cb: () => void): void }> }).__avTerminals)[0]!;
          term.write('', () => (c.t1 = performance.now()));
        }
      };
    });
    const ctrlC: number[] = [];
    for (let i = 0; i < 3; i++) {
      await page.keyboard.type('yes');
      await page.keyboard.press('Enter');
      await page.waitForTimeout(1500);
      await page.evaluate(() => {
        const c = (window as unknown as { __ctrlc: { armed: boolean; text: string; t0: number; t1: number } }).__ctrlc;
        Object.assign(c, { armed: true, text: '', t0: performance.now(), t1: 0 });
      });
      await page.keyboard.press('Control+C');
      const c = await waitFor(
        () => page.evaluate(() => {
          const x = (window as unknown as { __ctrlc: { t0: number; t1: number; armed: boolean } }).__ctrlc;
          return x.t1 ? { ...x } : null;
        }),
        'prompt after Ctrl-C',
        30_000,
      );
      ctrlC.push(c.t1 - c.t0);
      await page.evaluate(() => ((window as unknown as { __ctrlc: { armed: boolean } }).__ctrlc.armed = false));
    }
    console.log(`yes, then Ctrl-C → prompt back on screen: median ${median(ctrlC).toFixed(0)} ms (runs: ${ctrlC.map((t) => t.toFixed(0)).join(', ')} ms)`);

    const seconds = (st.t1 - st.t0) / 1000;
    const mb = st.chars / (1024 * 1024);
    console.log(
      `throughput PTY → browser xterm: ${mb.toFixed(1)} MB in ${seconds.toFixed(2)} s = ${(mb / seconds).toFixed(1)} MB/s; ` +
        `checksum ${st.hash === expected && st.chars === content.length ? 'OK' : `MISMATCH (got ${st.hash.toString(16)}, ${st.chars} chars; want ${expected.toString(16)}, ${content.length} chars)`}`,
    );
  } finally {
    await browser.close();
    await stack.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
