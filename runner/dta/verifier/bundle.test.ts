import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildVerifierBundle, freshBundle } from './bundle';

// esbuild and a node process on a loaded 2-core machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

/**
 * The verifier's prebuilt entry, built from a copy of the sources (so the test may edit them): it
 * runs, its parser thread runs, and it is fresh only while every source it was built from is
 * byte for byte the same.
 */
const PROJECT = fileURLToPath(new URL('../../../', import.meta.url));
/** A package bundled in (verifier/bundle.ts), copied into the test's tree rather than linked. */
const OWN_PACKAGE = 'markdown-it';
/** One of its files the bundle is built from. */
const OWN_PACKAGE_FILE = 'lib/index.mjs';
let copy: string;
let cacheDir: string;

beforeAll(() => {
  copy = fs.mkdtempSync(path.join(os.tmpdir(), 'dta-bundle-'));
  for (const dir of ['runner', 'protocol', 'common']) fs.cpSync(path.join(PROJECT, dir), path.join(copy, dir), { recursive: true });
  fs.copyFileSync(path.join(PROJECT, 'package.json'), path.join(copy, 'package.json'));
  // The copy's packages are the install's (linked), but for one bundled package copied, so the test may touch it.
  fs.mkdirSync(path.join(copy, 'node_modules'));
  for (const name of fs.readdirSync(path.join(PROJECT, 'node_modules'))) {
    if (name === '.cache') continue;
    if (name === OWN_PACKAGE) fs.cpSync(path.join(PROJECT, 'node_modules', name), path.join(copy, 'node_modules', name), { recursive: true });
    else fs.symlinkSync(path.join(PROJECT, 'node_modules', name), path.join(copy, 'node_modules', name));
  }
  cacheDir = path.join(copy, '.bundles');
});
afterAll(() => fs.rmSync(copy, { recursive: true, force: true }));

/** Sends one line to a verifier process and returns its answer. */
function ask(entry: string, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry], { cwd: copy, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`exit ${code}: ${err}`))));
    child.stdin.end(`${line}\n`);
  });
}

describe("the verifier's prebuilt entry", () => {
  it('is built, answers as the verifier, and its parser thread parses', async () => {
    const opts = { cacheDir, project: copy };
    expect(freshBundle(opts)).toBeNull();
    const entry = await buildVerifierBundle(opts);
    expect(freshBundle(opts)).toBe(entry);
    expect(entry.startsWith(cacheDir)).toBe(true);
    // Readable by a runner under another uid (or a user namespace), not 0700 as mkdtemp made it.
    expect(fs.statSync(path.dirname(entry)).mode & 0o777).toBe(0o755);

    // The request's own validation ran inside the bundle (zod and verify.ts bundled, zod resolved).
    const answer = JSON.parse(await ask(entry, JSON.stringify({ mode: 'applied', tool: 'link_updater' }))) as { passed: boolean; failures: string[] };
    expect(answer.passed).toBe(false);
    expect(answer.failures.join('\n')).toMatch(/^bad verify request: .*root/);

    // The thread the bundled parse pool starts (parse-pool.ts picks parse-worker.mjs beside it).
    const worker = new Worker(path.join(path.dirname(entry), 'parse-worker.mjs'));
    try {
      const replies: unknown[] = [];
      await new Promise<void>((resolve, reject) => {
        worker.on('error', reject);
        worker.on('message', (m: { ready?: true; id?: number }) => {
          replies.push(m);
          if (m.ready) worker.postMessage({ id: 7, files: [['a.md', '[x](http://old.example.com/a)\n']] });
          else resolve();
        });
      });
      expect(replies[1]).toEqual({ id: 7, links: [[expect.objectContaining({ url: 'http://old.example.com/a', rewritable: true })]] });
    } finally {
      await worker.terminate();
    }
  });

  it('is not fresh once a source it was built from changes or goes, and a rebuild is', async () => {
    const opts = { cacheDir, project: copy };
    const entry = freshBundle(opts) ?? (await buildVerifierBundle(opts));
    const parsers = path.join(copy, 'runner/dta/adapters/link-updater/parsers.ts');
    fs.appendFileSync(parsers, '\n// an edit\n');
    expect(freshBundle(opts)).toBeNull();
    const rebuilt = await buildVerifierBundle(opts);
    expect(rebuilt).not.toBe(entry);
    expect(freshBundle(opts)).toBe(rebuilt);

    // A file only the bundle imports (not an entry) counts as much as the entries.
    const hostBytes = path.join(copy, 'runner/dta/verifier/host-bytes.ts');
    const kept = fs.readFileSync(hostBytes);
    fs.rmSync(hostBytes);
    expect(freshBundle(opts)).toBeNull();
    fs.writeFileSync(hostBytes, kept);
    expect(freshBundle(opts)).toBe(rebuilt);

    // A bundled package's file rewritten (same bytes: a reinstall) is a change too.
    const pkgFile = path.join(copy, 'node_modules', OWN_PACKAGE, OWN_PACKAGE_FILE);
    fs.writeFileSync(pkgFile, fs.readFileSync(pkgFile));
    expect(freshBundle(opts)).toBeNull();
    const again = await buildVerifierBundle(opts);
    expect(freshBundle(opts)).toBe(again);
  });
});
