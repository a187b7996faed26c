/**
 * wetty 3.2.0 (npm; socket.io + node-pty + xterm.js, the peer issue 17's targets are stated
 * against) as a side of bench:live (bench/terminal-live.ts): installed on first use into a
 * gitignored cache folder (never a dependency of the project), started as its README says with a
 * command instead of `login`, and its own page driven in Chromium with the same terminal options
 * as the other two pages.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { ROOT } from '../server/integration/harness';

export const WETTY_VERSION = '3.2.0';
/** Where the bench installs it (gitignored: `bench/.cache/`). */
export const WETTY_DIR = join(ROOT, 'bench', '.cache', `wetty-${WETTY_VERSION}`);
const WETTY_PKG = join(WETTY_DIR, 'node_modules', 'wetty');
/** The shell all three sides run, with the same prompt (bench/one-hop/server.ts). */
const SHELL = 'bash --norc --noprofile';
/** wetty's base path, as in its README's example. */
const BASE = '/wetty';
/**
 * The cache folder's own package.json: npm 11 warns about install scripts not listed here; wetty's
 * node-pty (1.1.0, the same as ours) has no Linux prebuild and compiles with node-gyp.
 */
const CACHE_PACKAGE = { name: 'av-bench-wetty-cache', private: true, description: 'bench:live installs wetty here (bench/live-wetty.ts); not part of the project', allowScripts: { 'node-pty': true, '@parcel/watcher': true } };

/** The installed wetty's version, or null when it is not (fully) there. */
function installedVersion(): string | null {
  try {
    const v = (JSON.parse(readFileSync(join(WETTY_PKG, 'package.json'), 'utf8')) as { version?: string }).version;
    return v && existsSync(join(WETTY_PKG, 'build', 'main.js')) ? v : null;
  } catch {
    return null;
  }
}

/** The last lines of a failed command's output, for the reason printed. */
const tail = (s: string, n = 6) => s.trim().split('\n').slice(-n).join(' | ');

/** What npm said went wrong: its first error lines (code, errno, the message) and where its log is. */
function npmFailure(out: string): string {
  const errors = out.trim().split('\n').filter((l) => l.startsWith('npm error'));
  if (!errors.length) return tail(out) || 'no output';
  const log = errors.find((l) => /complete log/.test(l));
  return [...errors.slice(0, 3), ...(log ? [log] : [])].map((l) => l.replace(/^npm error\s*/, '')).join(' | ');
}

/**
 * Whether wetty's own node-pty loads and runs a program here (its native part is built at install):
 * spawns `echo` through it from inside the cache folder. Null when it works, else why not.
 */
function nodePtyProblem(): string | null {
  const probe = `import('node-pty').then((p) => { const t = p.default.spawn('/bin/echo', ['pty-ok'], {}); let out = ''; t.onData((d) => (out += d)); t.onExit(() => { console.log(out.includes('pty-ok') ? 'ok' : 'no output: ' + JSON.stringify(out)); process.exit(0); }); }, (e) => { console.log(String(e)); process.exit(1); });`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { cwd: WETTY_PKG, encoding: 'utf8', timeout: 30_000 });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
  return r.status === 0 && out === 'ok' ? null : `node-pty in wetty's tree does not run: ${tail(out) || `exit ${r.status}`}`;
}

function nodePtyVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(WETTY_DIR, 'node_modules', 'node-pty', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

/**
 * wetty 3.2.0 ready to start: installs it into WETTY_DIR on first use (`npm install wetty@3.2.0`,
 * saying so), reuses it after, and checks its node-pty runs. Returns why not instead of throwing:
 * the bench goes on without the wetty side.
 */
export function ensureWetty(): { ok: true; main: string; note: string } | { ok: false; why: string } {
  let installed = installedVersion();
  if (installed !== WETTY_VERSION) {
    console.log(`wetty ${WETTY_VERSION}: ${installed ? `found ${installed}, ` : ''}installing into ${WETTY_DIR.slice(ROOT.length + 1)} (npm install wetty@${WETTY_VERSION}, first use only: ~20 s and a node-gyp build of node-pty)…`);
    mkdirSync(WETTY_DIR, { recursive: true });
    writeFileSync(join(WETTY_DIR, 'package.json'), JSON.stringify(CACHE_PACKAGE, null, 2) + '\n');
    const t0 = Date.now();
    const r = spawnSync('npm', ['install', '--prefix', WETTY_DIR, `wetty@${WETTY_VERSION}`, '--no-save', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: WETTY_DIR, encoding: 'utf8', timeout: 600_000 });
    installed = installedVersion();
    if (r.status !== 0 || installed !== WETTY_VERSION) {
      return { ok: false, why: `npm install wetty@${WETTY_VERSION} failed (exit ${r.status ?? r.signal ?? r.error?.message}): ${npmFailure(`${r.stdout ?? ''}${r.stderr ?? ''}`)}` };
    }
    console.log(`wetty ${WETTY_VERSION}: installed in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
  const pty = nodePtyProblem();
  if (pty) return { ok: false, why: pty };
  return { ok: true, main: join(WETTY_PKG, 'build', 'main.js'), note: `wetty ${WETTY_VERSION} from ${WETTY_DIR.slice(ROOT.length + 1)}, its own node-pty ${nodePtyVersion()} (built here by node-gyp)` };
}

/** A TCP port free right now on 127.0.0.1 (wetty takes a port number, not 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

export interface WettyServer {
  child: ChildProcess;
  port: number;
  /** Its page (`--base /wetty/`; it redirects /wetty/ to /wetty). */
  url: string;
  /** Its socket.io path, for Node clients (bench/live-echo.ts wettyClient). */
  socketPath: string;
  /** How it was started, for the bench's output. */
  command: string;
}

/**
 * Starts wetty as its README says — `wetty --port P --base /wetty/ --command CMD` — on 127.0.0.1,
 * as this user. As root on localhost wetty runs the command directly (`/usr/bin/env -S CMD`, no
 * login or ssh). Its environment is the one-hop's (PATH, HOME, PS1 '$ '), its working folder HOME.
 */
export async function startWetty(main: string): Promise<WettyServer> {
  const port = await freePort();
  const home = process.env.HOME ?? '/';
  const args = ['--host', '127.0.0.1', '--port', String(port), '--base', `${BASE}/`, '--command', SHELL];
  const child = spawn(process.execPath, [main, ...args], {
    cwd: home,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, PS1: '$ ', NODE_ENV: 'production' },
  });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (b: Buffer) => {
      log = (log + b.toString()).slice(-4096);
      if (log.includes('"Server started"')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`wetty exited (${code}) before it listened: ${tail(log)}`)));
  });
  // Keep reading its log (one line per HTTP request and per shell started) so it never blocks on a full pipe.
  child.stdout!.resume();
  child.stderr!.resume();
  const command = `node wetty/build/main.js ${args.map((a) => (a.includes(' ') ? `'${a}'` : a)).join(' ')}`;
  return { child, port, url: `http://127.0.0.1:${port}${BASE}`, socketPath: `${BASE}/socket.io`, command };
}

/**
 * BENCH_WETTY_FIT=0: wetty's own "fit terminal" setting off, so its terminal keeps xterm's 80×24
 * like the one-hop's page (by default it fits the window, as shipped: 161×53 here), for comparing
 * the pages' cost row for row.
 */
export const WETTY_FIT = process.env.BENCH_WETTY_FIT !== '0';

/**
 * The terminal options of the other two pages (bench/one-hop/server.ts, the product's), in wetty's
 * own settings store: its client reads `localStorage.options` (what its settings editor saves).
 */
const WETTY_OPTIONS = { xterm: { fontSize: 13, fontFamily: 'DejaVu Sans Mono, monospace', scrollback: 10000 }, wettyVoid: 0, wettyFitTerminal: WETTY_FIT };

/**
 * BENCH_WETTY_WEBGL=1: leave wetty's page as shipped (its client loads @xterm/addon-webgl on any
 * desktop browser; here that is SwiftShader's software WebGL2). By default the page gets no
 * WebGL2: wetty 3.2 has no renderer setting, and without WebGL2 its addon fails and xterm keeps
 * its DOM renderer, as on the other two pages.
 */
export const WETTY_WEBGL = process.env.BENCH_WETTY_WEBGL === '1';

/**
 * wetty's page in a fresh context of `browser`, its terminal live, with the hooks bench:live's
 * page side expects: `__avTerminals` (its xterm) and `__avOnChunk` called with every string handed
 * to xterm's write — wetty writes what its socket's `data` events carry, after its file-download
 * sniffing, so the checksum covers exactly what xterm was given, as on the other pages.
 */
export async function openWettyPage(browser: Browser, url: string, viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  await context.addInitScript(
    ({ options, webgl }) => {
      localStorage.options = JSON.stringify(options);
      if (webgl) return;
      const getContext = HTMLCanvasElement.prototype.getContext;
      HTMLCanvasElement.prototype.getContext = function (this: HTMLCanvasElement, kind: string, ...rest: unknown[]) {
        return kind === 'webgl2' ? null : (getContext as (this: HTMLCanvasElement, k: string, ...r: unknown[]) => RenderingContext | null).call(this, kind, ...rest);
      } as typeof getContext;
    },
    { options: WETTY_OPTIONS, webgl: WETTY_WEBGL },
  );
  const page = await context.newPage();
  // Two page errors are expected and not shown: the addon's "WebGL2 not supported", thrown from
  // xterm's open asynchronously (xterm reports a listener's error on a timer and goes on), and its
  // service worker's 404 — wetty serves sw.js with express's sendFile, which refuses a path through
  // a dot folder (bench/.cache); that worker only caches the page's files, sockets never pass it.
  page.on('pageerror', (e) => {
    if ((WETTY_WEBGL || !/WebGL2 not supported/.test(e.message)) && !/ServiceWorker.*sw\.js.*404/.test(e.message)) console.log(`  wetty page error: ${e.message}`);
  });
  await page.goto(url);
  await page.waitForFunction(() => {
    const t = (window as unknown as { wetty_term?: { buffer: { active: { getLine(i: number): { translateToString(trim: boolean): string } | undefined; cursorY: number; baseY: number } } } }).wetty_term;
    const b = t?.buffer.active;
    // Its prompt on the cursor's line ('$ ': a written space is not trimmed).
    return b?.getLine(b.baseY + b.cursorY)?.translateToString(true).trimEnd().endsWith('$') ?? false;
  }, null, { timeout: 60_000 });
  await page.evaluate(() => {
    const w = window as unknown as { wetty_term: { write(d: string, cb?: () => void): void }; __avTerminals: Record<string, unknown>; __avOnChunk?: (id: string, d: string) => void };
    const term = w.wetty_term;
    const write = term.write.bind(term);
    term.write = (d, cb) => {
      w.__avOnChunk?.('wetty', d);
      write(d, cb);
    };
    w.__avTerminals = { wetty: term };
  });
  return page;
}
