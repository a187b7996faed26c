import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCorpus, leaked, seeded, type CorpusCase } from '../../common/redact/corpus';
import type { SessionRedactionRow, SessionSummary, WireEvent } from '../../protocol';
import { connectDb } from '../db';
import { storedEvents } from '../services/terminal/stored-output';
import { Api, ROOT, startStack, TerminalWatcher, uiSocket, waitFor, type Stack } from './harness';

/**
 * Issue 10's proof: the corpus (≥ 300 secret cases and harmless look-alikes, fake values made at
 * test time) printed into a REAL shell session (real server, real runner, real PTY) in every
 * emission mode, and typed key by key into a nested PTY whose kernel echoes it. Three surfaces are
 * checked: what the browser socket receives, what the database stored, and the server's and
 * runner's logs. Pauses are kept short and the slow modes sampled, so the run stays in minutes.
 */

const SEED = 10;
/** Sampling of the slower emission modes (every Nth case). */
const CAT_EVERY = 5;
const BYTES_EVERY = 10;
const CHUNKS_EVERY = 7;
const CUTS_EVERY = 9;
/** Per-byte and per-chunk pauses stay short: what matters is that writes are separate, not how long apart. */
const MAX_BYTE_PAUSE_MS = 2;
/** "Every cut position around the secret, with pauses of 0–50 ms". */
const MAX_CUT_PAUSE_MS = 50;
/** Two cases are written byte by byte with one-second pauses inside the secret. */
const SLOW_PAUSE_MS = 1000;
const TYPED_CASES = 12;

interface Emission {
  n: number;
  mode: 'write' | 'cat' | 'bytes' | 'chunks' | 'cut';
  text: string;
  cut?: number;
  pauseMs?: number;
  maxPauseMs?: number;
  slowAt?: number[];
  slowMs?: number;
  case: CorpusCase;
}

function plan(cases: CorpusCase[]): Emission[] {
  const r = seeded(SEED + 1);
  const out: Emission[] = [];
  const add = (c: CorpusCase, e: Omit<Emission, 'n' | 'case' | 'text'>) => out.push({ n: out.length + 1, text: c.text, case: c, ...e });
  const secretAt = (c: CorpusCase) => {
    const s = c.secrets[0] ?? '';
    const at = c.text.indexOf(s);
    return at < 0 ? null : { at, len: s.length };
  };
  let slow = 0;
  cases.forEach((c, k) => {
    add(c, { mode: 'write' });
    if (k % CAT_EVERY === 0) add(c, { mode: 'cat' });
    if (k % CHUNKS_EVERY === 0) add(c, { mode: 'chunks', maxPauseMs: MAX_BYTE_PAUSE_MS });
    if (k % BYTES_EVERY === 0) {
      const pos = secretAt(c);
      if (pos && slow < 2 && c.kind === 'secret' && pos.len > 8) {
        slow++;
        add(c, { mode: 'bytes', maxPauseMs: 0, slowAt: [pos.at + 1, pos.at + Math.floor(pos.len / 2)], slowMs: SLOW_PAUSE_MS });
      } else add(c, { mode: 'bytes', maxPauseMs: MAX_BYTE_PAUSE_MS });
    }
    const pos = secretAt(c);
    if (c.kind === 'secret' && pos && k % CUTS_EVERY === 0) {
      // Around the secret: just before it, at its first characters, its middle and its end.
      for (const cut of new Set([pos.at - 1, pos.at, pos.at + 1, pos.at + Math.floor(pos.len / 2), pos.at + pos.len - 1, pos.at + pos.len])) {
        if (cut > 0 && cut < c.text.length) add(c, { mode: 'cut', cut, pauseMs: r.int(MAX_CUT_PAUSE_MS + 1) });
      }
    }
  });
  // Every cut position across two secrets, pauses stepping through 0–50 ms.
  for (const c of cases.filter((x) => x.kind === 'secret' && x.what.startsWith('github-token')).slice(0, 2)) {
    const pos = secretAt(c)!;
    for (let cut = Math.max(1, pos.at - 2); cut <= Math.min(c.text.length - 1, pos.at + pos.len + 1); cut++) add(c, { mode: 'cut', cut, pauseMs: cut % (MAX_CUT_PAUSE_MS + 1) });
  }
  return out;
}

/** Text between an emission's markers (the player starts each on a line of its own, as programs print). */
function segment(text: string, n: number): string | null {
  const open = `@@C:${n}@@\r\n`;
  const start = text.indexOf(open);
  const end = text.indexOf(`@@E:${n}@@`, start);
  return start < 0 || end < 0 ? null : text.slice(start + open.length, end);
}

describe('redaction holds on real terminal output (issue 10)', () => {
  let stack: Stack;
  let api: Api;
  let session: SessionSummary;
  let watcher: TerminalWatcher;
  let dir: string;
  const corpus = buildCorpus(SEED);
  const emissions = plan(corpus.cases);

  beforeAll(async () => {
    stack = await startStack();
    api = new Api(stack.url);
    await api.setupAdmin();
    for (const [name, value] of Object.entries(corpus.orgSecrets)) await api.ok('PUT', `/api/secrets/${name}`, { value });
    const repo = await api.readyRepo();
    session = await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: '', provider: 'shell' });
    await api.waitState(session.id, ['RUNNING']);
    watcher = new TerminalWatcher(await uiSocket(stack.url, api.cookie), session.id);
    await watcher.attach();
    // The session runs sandboxed as another user with a private /tmp: the plan sits in a
    // world-readable folder of the checkout, and the player writes its `cat` files into its own /tmp.
    mkdirSync(join(ROOT, '.reports'), { recursive: true });
    dir = mkdtempSync(join(ROOT, '.reports', 'av-redact-'));
    chmodSync(dir, 0o755);
    const casesDir = `/tmp/av-redact-cases-${basename(dir)}`;
    writeFileSync(join(dir, 'plan.json'), JSON.stringify({ seed: SEED, dir: casesDir, emissions: emissions.map(({ case: _c, ...e }) => e) }), { mode: 0o644 });
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('no case leaks to the browser, the database or the logs, and no harmless line changes', { timeout: 600_000 }, async () => {
    await watcher.waitText(/[#$] $/, 'the prompt');
    // -opost: the player's bytes reach the terminal exactly as written (no \n → \r\n).
    await watcher.type(`stty -opost; ${process.execPath} ${join(ROOT, 'server/integration/fixtures/redaction-player.mjs')} ${join(dir, 'plan.json')}; stty opost\r`);
    await watcher.waitText('\r\n@@DONE@@', 'the player to finish', 420_000);

    // Typed key by key into a nested PTY: its kernel echoes every key, then the shell prints it.
    await watcher.type(`${'python3'} -c 'import pty; pty.spawn("/bin/sh")'\r`);
    await watcher.waitText(/pty\.spawn[^]*[#$] $/, 'the nested shell');
    const line = (c: CorpusCase) => c.text.replace(/\r\n$/, '');
    const typable = corpus.cases.filter((c) => c.kind === 'secret' && !/['\r\n\x1b\\!`$]/.test(line(c)) && line(c).length < 200);
    expect(typable.length).toBeGreaterThanOrEqual(TYPED_CASES);
    const typed = Array.from({ length: TYPED_CASES }, (_, k) => typable[Math.floor((k * typable.length) / TYPED_CASES)]!);
    for (const [k, c] of typed.entries()) {
      await watcher.typeKeys(`echo '${line(c)}'; echo @@T$((${k}+1000))@@\r`);
      await watcher.waitText(`@@T${k + 1000}@@`, `typed case ${k}`);
    }
    // Leave the nested shell, then the session's own; a key typed while python restores the
    // terminal can be lost, so exit is typed again until the session has ended.
    for (let attempt = 0; ; attempt++) {
      await watcher.type('exit\r');
      const ended = await api.waitState(session.id, ['COMPLETED', 'FAILED'], 10_000).catch(() => null);
      if (ended) break;
      if (attempt >= 5) throw new Error('the session did not end after exit');
    }

    const browser = watcher.text();
    // What the database holds, read as the app reads it: event rows and the ~64 KB segments terminal output is folded into.
    const db = await connectDb(`file:${join(stack.dataDir, 'village.db')}`);
    const stored: WireEvent[] = [];
    for await (const page of storedEvents(db, session.id, 0)) stored.push(...page);
    await db.$disconnect();
    const storedText = stored.map((e) => (e.type === 'TERMINAL_CHUNK' ? (e as { data: string }).data : '')).join('');
    const storedAll = stored.map((e) => JSON.stringify(e)).join('\n');
    const logs = stack.logs.join('');

    const leaks: string[] = [];
    const altered: string[] = [];
    let secretCases = 0;
    for (const e of emissions) {
      if (e.case.kind === 'secret') secretCases++;
      for (const [surface, text] of [['browser', browser], ['stored', storedText]] as const) {
        const seg = segment(text, e.n);
        if (seg === null) {
          altered.push(`${surface}: emission ${e.n} (${e.case.id}, ${e.mode}) is missing`);
          continue;
        }
        const l = leaked(e.case, seg);
        if (l) leaks.push(`${surface}: ${e.case.id} (${e.mode}${e.cut !== undefined ? ` at ${e.cut}` : ''}) shows ${JSON.stringify(l)}`);
        if (e.case.kind === 'harmless' && seg !== e.case.text) altered.push(`${surface}: ${e.case.id} (${e.mode}) became ${JSON.stringify(seg).slice(0, 200)}`);
      }
    }
    // Whatever the framing, no secret of any case anywhere: the whole stream, every stored event, the logs.
    for (const c of [...corpus.cases, ...typed]) {
      for (const [surface, text] of [['browser', browser], ['stored events', storedAll], ['logs', logs]] as const) {
        const l = leaked(c, text);
        if (l) leaks.push(`${surface}: ${c.id} shows ${JSON.stringify(l)}`);
      }
    }
    secretCases += typed.length;
    const leakedCases = new Set(leaks.map((l) => l.split(' shows ')[0])).size;
    console.log(`redaction: ${leakedCases} leaked of ${secretCases} cases (${emissions.length} emissions, ${typed.length} typed; ${altered.length} harmless lines altered)`);
    expect(leaks.slice(0, 20)).toEqual([]);
    expect(altered.slice(0, 20)).toEqual([]);

    // The receipt: names and counts, never values; the control plane also recorded what it masked.
    const receipt = await waitFor(async () => {
      const r = await api.ok<SessionRedactionRow[]>('GET', `/api/sessions/${session.id}/redactions`);
      return r.some((x) => x.source === 'runner') ? r : null;
    }, 'the redaction receipt');
    expect(receipt.some((r) => r.rule === 'github-token' && r.count > 0 && r.first_seq <= r.last_seq)).toBe(true);
    expect(receipt.some((r) => r.secret_name === 'DB_PASSWORD')).toBe(true);
    const receiptText = JSON.stringify(receipt);
    for (const v of Object.values(corpus.orgSecrets)) expect(receiptText).not.toContain(v);
    const audit = await api.ok<Array<{ action: string; target: string; detail: Record<string, unknown> }>>('GET', '/api/audit?action=session.redaction');
    expect(audit.some((a) => a.target === session.id)).toBe(true);
  });
});
