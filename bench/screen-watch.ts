/**
 * What watching an agent CLI's screen costs the runner's main thread (runner/providers/screen-watch.ts,
 * issue 17): every PTY read of a claude / codex / gemini session goes into a headless xterm there,
 * the thread that also writes keys to PTYs and reads their echoes. Output is pushed in 4 KB reads,
 * as node-pty hands it over, through a ScreenWatch with Claude Code's rules, then its screen is
 * read as a gate check and an exit would read it; beside it, in the same invocation, the same
 * pushes with no screen watch (the baseline: a shell session's cost here is zero).
 *
 * Three kinds of output, BENCH_MB (8) each: numbered lines (`seq`), a coloured build log, and an
 * Ink-style TUI repainting a 20-line frame in place (what the agent CLIs print). Printed per kind:
 * CPU ms per MB of the process (main thread and V8's helpers) and the longest stretch the event
 * loop was held (a key's echo waits that long; an upper bound, since reads come back to back here
 * and xterm parses everything queued since its last timer turn in one go, up to 12 ms), with the
 * load average, and the share of the output the watch never parsed (the lazy screen drops what
 * scrolls out of its whole buffer before a read, common/terminal/scroll-out.ts). BENCH_ROUNDS (2) rounds.
 * BENCH_BEFORE=DIR adds a row per round for another checkout's screen watch, e.g. main's from
 * `git archive main runner protocol common | tar -x -C DIR` with node_modules linked in.
 *
 * Asserts nothing. Usage: npm run bench:screen-watch
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setImmediate as turn } from 'node:timers/promises';
import { CLAUDE_SCREEN_RULES } from '../runner/providers/claude';
import { ScreenWatch } from '../runner/providers/screen-watch';

const MB = Number(process.env.BENCH_MB ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const BEFORE = process.env.BENCH_BEFORE;
/** node-pty's reads of a busy PTY on Linux are about this size. */
const READ = 4096;
const COLS = 120;
const ROWS = 40;

/** `skippedChars`: what the watch never parsed (a checkout from before the lazy screen has none). */
type Watch = Pick<ScreenWatch, 'push' | 'lastLine' | 'close'> & { skippedChars?: number };
type MakeWatch = () => Watch;

function numberedLines(bytes: number): string {
  const lines: string[] = [];
  for (let i = 1, n = 0; n < bytes; i++) {
    const l = `${String(i).padStart(99, '0')}\r\n`;
    lines.push(l);
    n += l.length;
  }
  return lines.join('');
}

function buildLog(bytes: number): string {
  const out: string[] = [];
  for (let i = 1, n = 0; n < bytes; i++) {
    const l = `\x1b[32m✓\x1b[0m \x1b[2msrc/module-${i % 97}/file-${i}.test.ts\x1b[0m > suite ${i % 13} > \x1b[1mcase ${i}\x1b[22m \x1b[33m${i % 50} ms\x1b[0m\r\n`;
    out.push(l);
    n += l.length;
  }
  return out.join('');
}

/** An Ink-style frame repainted in place: cursor up over the old frame, erase each line, print it again. */
function tuiFrames(bytes: number): string {
  const spinner = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';
  const height = 20;
  const out: string[] = [];
  for (let f = 0, n = 0; n < bytes; f++) {
    const lines = [`\x1b[35m${spinner[f % spinner.length]}\x1b[0m Thinking… (${f} s · esc to interrupt)`];
    for (let i = 1; i < height - 1; i++) lines.push(`│ ${`line ${i} of the agent's answer, frame ${f}`.padEnd(COLS - 4)} │`);
    lines.push(`╰${'─'.repeat(COLS - 2)}╯`);
    const frame = (f ? `\x1b[${height}A` : '') + lines.map((l) => `\x1b[2K${l}\r\n`).join('');
    out.push(frame);
    n += frame.length;
  }
  return out.join('');
}

async function run(text: string, make: MakeWatch | null): Promise<{ cpuMsPerMb: number; heldMs: number; skipped: string }> {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const cpu0 = process.cpuUsage();
  delay.enable();
  const watch = make?.() ?? null;
  let sink = 0;
  for (let at = 0; at < text.length; at += READ) {
    const read = text.slice(at, at + READ);
    sink += read.length;
    watch?.push(read);
    // One read per turn of the loop, as a PTY's reads arrive.
    await turn();
  }
  // The screen as a check or an exit reads it: everything written is on the grid by then.
  await watch?.lastLine();
  const skipped = watch?.skippedChars === undefined ? '–' : `${((100 * watch.skippedChars) / text.length).toFixed(1)}%`;
  watch?.close();
  delay.disable();
  const cpu = process.cpuUsage(cpu0);
  if (sink !== text.length) throw new Error('lost output');
  return { cpuMsPerMb: (cpu.user + cpu.system) / 1000 / (text.length / (1024 * 1024)), heldMs: delay.max / 1e6, skipped };
}

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

async function main() {
  const bytes = MB * 1024 * 1024;
  const kinds: Array<[string, string]> = [
    ['numbered lines', numberedLines(bytes)],
    ['coloured build log', buildLog(bytes)],
    ['TUI frames repainted in place', tuiFrames(bytes)],
  ];
  const variants: Array<[string, MakeWatch | null]> = [
    ['no screen watch (baseline)', null],
    ['screen watch (this checkout)', () => new ScreenWatch('claude', CLAUDE_SCREEN_RULES, { cols: COLS, rows: ROWS }, () => undefined)],
  ];
  if (BEFORE) {
    const mod = (await import(join(BEFORE, 'runner/providers/screen-watch.ts'))) as { ScreenWatch: typeof ScreenWatch };
    variants.push([`screen watch (${BEFORE})`, () => new mod.ScreenWatch('claude', CLAUDE_SCREEN_RULES, { cols: COLS, rows: ROWS }, () => undefined)]);
  }
  console.log(`${MB} MB of each kind in ${READ}-byte reads, ${COLS}×${ROWS}; load at start ${load()}`);
  console.log('| round | output | variant | CPU ms/MB | longest loop hold (ms) | never parsed | load |\n|---|---|---|---|---|---|---|');
  for (let r = 1; r <= ROUNDS; r++) {
    for (const [kind, text] of kinds) {
      // The watches take turns at running first on a kind (the first run of a kind ran slower).
      const watches = variants.slice(1);
      for (const [name, make] of [variants[0]!, ...(r % 2 ? watches : watches.reverse())]) {
        const { cpuMsPerMb, heldMs, skipped } = await run(text, make);
        console.log(`| ${r} | ${kind} | ${name} | ${cpuMsPerMb.toFixed(1)} | ${heldMs.toFixed(1)} | ${skipped} | ${load()} |`);
      }
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
