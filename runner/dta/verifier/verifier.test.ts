import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DtaOutput } from '../../../protocol';
import { runDta } from '../engine';
import { sha256 } from '../git-state';
import { DEFAULT_POLICY } from '../policy';
import { gitIn, makeRepo, SITE_FILES } from '../testing/fixture-repos';
import { ensureVerifierBundle } from './bundle';
import { endSpareVerifier, runVerifier, VerifierProcess, verifiersExited, warmVerifier } from './spawn';
import type { VerifyRequest } from './verify';

// Each run starts a verifier process (tsx); a loaded 2-core machine needs minutes, not seconds.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

/**
 * The verifier catches tampered outputs: it is run as its own process with the claims of a real
 * apply, altered one way at a time, and must fail each with a reason.
 */
const LINKS = { from_hosts: ['http://old.example.com', 'https://old.example.com'], to_host: 'https://new.example.com' };
const VERIFY_MS = 60_000;
let dir: string;
let applied: DtaOutput;
let request: VerifyRequest;

beforeAll(async () => {
  // The processes below run from the prebuilt entry, as a runner's do (bundle.test.ts builds it from a copy).
  expect(await ensureVerifierBundle()).toMatch(/main\.mjs$/);
  dir = makeRepo(SITE_FILES);
  applied = await runDta({ tool: 'link_updater', version: '1.0', mode: 'apply', target: { repo_path: dir, glob: 'site/**' }, params: LINKS });
  expect(applied.verifier.passed).toBe(true);
  const appliedJson = JSON.parse(fs.readFileSync(path.join(dir, applied.artifacts.find((a) => a.endsWith('applied.json'))!), 'utf8')) as { sha256: Record<string, string> };
  request = {
    mode: 'applied',
    tool: 'link_updater',
    root: dir,
    params: LINKS,
    globs: ['site/**'],
    allowed_paths: DEFAULT_POLICY.allowed_paths,
    seed: 42,
    claim: {
      head: gitIn(dir, 'rev-parse', 'HEAD').trim(),
      baseline: applied.baseline,
      units: applied.applied_changes.link_updates,
      files: applied.files,
      patch_path: path.join(dir, applied.artifacts.find((a) => a.endsWith('.patch'))!),
      patch_sha256: applied.patch_sha256!,
      hashes: appliedJson.sha256,
    },
  };
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the independent verifier', () => {
  it('passes the honest claims of the real apply', async () => {
    expect(await runVerifier(request, VERIFY_MS)).toMatchObject({ passed: true, failures: [] });
  });

  it('fails a forged count: baseline or units that the files do not show', async () => {
    const forgedBaseline = await runVerifier({ ...request, claim: { ...request.claim, baseline: { ...request.claim.baseline, links_to_update: 9 } } }, VERIFY_MS);
    expect(forgedBaseline.passed).toBe(false);
    expect(forgedBaseline.failures.join('\n')).toMatch(/baseline does not match the files at HEAD: links_to_update claimed 9, measured 15/);
    const forgedUnits = await runVerifier({ ...request, claim: { ...request.claim, units: 20 } }, VERIFY_MS);
    expect(forgedUnits.failures.join('\n')).toMatch(/claims 20 link updates, the files show 15/);
  });

  it('one process serves a prepare and several requests in turn, and what it parsed never makes a forged count pass', async () => {
    const v = new VerifierProcess(dir);
    expect(v.prebuilt).toBe(true);
    try {
      v.prepare({ mode: 'prepare', tool: 'link_updater', root: dir, head: request.claim.head, params: LINKS, globs: request.globs, allowed_paths: request.allowed_paths });
      expect(await v.run(request, VERIFY_MS)).toMatchObject({ passed: true, failures: [] });
      const forged = await v.run({ ...request, claim: { ...request.claim, baseline: { ...request.claim.baseline, links_to_update: 9 } } }, VERIFY_MS);
      expect(forged.passed).toBe(false);
      expect(forged.failures.join('\n')).toMatch(/links_to_update claimed 9, measured 15/);
      expect(await v.run({ ...request, tool: 'nope' } as unknown as VerifyRequest, VERIFY_MS)).toMatchObject({ passed: false, failures: [expect.stringMatching(/bad verify request/)] });
      // A bad request answers, and the process still serves the next one.
      expect(await v.run(request, VERIFY_MS)).toMatchObject({ passed: true });
      expect(v.alive).toBe(true);
    } finally {
      v.close();
    }
  });

  it('a spare verifier, started ahead, is taken by the next run only, serves it like a new one, and stays warm for the next after', async () => {
    const spare = warmVerifier();
    expect(spare).toEqual(expect.any(Number));
    expect(warmVerifier()).toBe(spare); // one spare at a time
    const first = new VerifierProcess(dir);
    const second = new VerifierProcess(dir);
    try {
      // The first took the spare, the second had none left and started its own.
      expect(first.pid).toBe(spare);
      expect(second.pid).not.toBe(spare);
      expect(await first.run({ ...request, claim: { ...request.claim, units: 20 } }, VERIFY_MS)).toMatchObject({ passed: false, failures: [expect.stringMatching(/claims 20 link updates, the files show 15/)] });
      expect(await second.run(request, VERIFY_MS)).toMatchObject({ passed: true });
    } finally {
      first.close();
      second.close();
    }
    // A closed run's verifier is the next run's spare (one: the last to close its run), which the next verifier takes.
    await verifiersExited();
    const next = warmVerifier();
    expect([first.pid, second.pid]).toContain(next);
    expect(first.alive).toBe(false);
    expect(await first.run(request, VERIFY_MS)).toMatchObject({ passed: false, failures: ['the verifier was closed'] });
    const third = new VerifierProcess(dir);
    try {
      expect(third.pid).toBe(next);
      expect(await third.run(request, VERIFY_MS)).toMatchObject({ passed: true });
    } finally {
      third.close();
    }
  });

  it('a warm verifier carries nothing of a run into the next: another tree gives what a fresh process gives, and a forgery after a good run fails', async () => {
    // Another repository whose HEAD has other contents: the first run's tree, scope and HEAD measure must not answer for it.
    const other = makeRepo({ ...SITE_FILES, 'site/extra.md': '[x](http://old.example.com/x) [y](https://old.example.com/y)\n' });
    try {
      const otherApplied = await runDta({ tool: 'link_updater', version: '1.0', mode: 'apply', target: { repo_path: other, glob: 'site/**' }, params: LINKS });
      expect(otherApplied.verifier.passed).toBe(true);
      const otherJson = JSON.parse(fs.readFileSync(path.join(other, otherApplied.artifacts.find((a) => a.endsWith('applied.json'))!), 'utf8')) as { sha256: Record<string, string> };
      const otherRequest: VerifyRequest = {
        ...request,
        root: other,
        claim: { head: gitIn(other, 'rev-parse', 'HEAD').trim(), baseline: otherApplied.baseline, units: otherApplied.applied_changes.link_updates, files: otherApplied.files, patch_path: path.join(other, otherApplied.artifacts.find((a) => a.endsWith('.patch'))!), patch_sha256: otherApplied.patch_sha256!, hashes: otherJson.sha256 },
      };
      // Through fresh processes (no spare waiting: each starts its own, ended after) …
      const runFresh = async (req: VerifyRequest) => {
        endSpareVerifier();
        const r = await runVerifier(req, VERIFY_MS);
        await verifiersExited();
        endSpareVerifier();
        return r;
      };
      const fresh = [await runFresh(request), await runFresh(otherRequest)];
      const warm = warmVerifier();
      // … and through one warm process, run after run.
      const runs: Array<[VerifyRequest, number | undefined]> = [];
      const through = async (req: VerifyRequest) => {
        const v = new VerifierProcess(req.root);
        try {
          v.prepare({ mode: 'prepare', tool: 'link_updater', root: req.root, head: req.claim.head, params: LINKS, globs: req.globs, allowed_paths: req.allowed_paths });
          runs.push([req, v.pid]);
          return await v.run(req, VERIFY_MS);
        } finally {
          v.close();
          await verifiersExited();
        }
      };
      const good1 = await through(request);
      const good2 = await through(otherRequest);
      const forged = await through({ ...otherRequest, claim: { ...otherRequest.claim, units: otherRequest.claim.units - 2 } });
      const good3 = await through(request);
      // One process served every run.
      expect(new Set(runs.map(([, pid]) => pid))).toEqual(new Set([warm]));
      expect(good1).toEqual(fresh[0]);
      expect(good2).toEqual(fresh[1]);
      expect(good2).toMatchObject({ passed: true, failures: [] });
      expect(forged.passed).toBe(false);
      expect(forged.failures.join('\n')).toMatch(/claims 15 link updates, the files show 17/);
      expect(good3).toEqual(fresh[0]);
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  it('a verifier that timed out is not kept: the next run gets a fresh one', async () => {
    const v = new VerifierProcess(dir);
    const pid = v.pid;
    try {
      expect(await v.run(request, 1)).toMatchObject({ passed: false, failures: [expect.stringMatching(/did not finish within 1 ms/)] });
    } finally {
      v.close();
    }
    await verifiersExited();
    const next = new VerifierProcess(dir);
    try {
      expect(next.pid).not.toBe(pid);
      expect(await next.run(request, VERIFY_MS)).toMatchObject({ passed: true });
    } finally {
      next.close();
    }
  });

  it('fails when a file changed between apply and verify', async () => {
    const file = path.join(dir, 'site/css/site.css');
    const good = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, `${good}/* sneaked in */\n`);
    try {
      const r = await runVerifier(request, VERIFY_MS);
      expect(r.passed).toBe(false);
      expect(r.failures.join('\n')).toMatch(/site\/css\/site\.css is not what the apply wrote/);
    } finally {
      fs.writeFileSync(file, good);
    }
  });

  it('fails new bytes that are not the host swap alone, even when the claimed hashes are theirs', async () => {
    // A link moved to another host than the one asked: the verifier's own host swap of HEAD differs
    // from these bytes, so it parses them, and the counts show it.
    const rel = 'site/docs/guide.md';
    const file = path.join(dir, rel);
    const good = fs.readFileSync(file, 'utf8');
    const forged = good.replace('https://new.example.com/about', 'https://elsewhere.example.com/about');
    expect(forged).not.toBe(good);
    fs.writeFileSync(file, forged);
    try {
      const r = await runVerifier({ ...request, claim: { ...request.claim, hashes: { ...request.claim.hashes, [rel]: sha256(forged) } } }, VERIFY_MS);
      expect(r.passed).toBe(false);
      expect(r.failures.join('\n')).toMatch(/links to the new host grew by 14, expected 15/);
    } finally {
      fs.writeFileSync(file, good);
    }
  });

  it('fails a partial apply: a claimed file left as it was', async () => {
    const file = path.join(dir, 'site/docs/guide.md');
    const good = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, SITE_FILES['site/docs/guide.md']);
    try {
      const r = await runVerifier(request, VERIFY_MS);
      expect(r.passed).toBe(false);
      expect(r.failures.join('\n')).toMatch(/partial apply: 1 claimed files are unchanged on disk \(site\/docs\/guide\.md\)/);
      expect(r.failures.join('\n')).toMatch(/links_to_update is 4 after, not 0/);
    } finally {
      fs.writeFileSync(file, good);
    }
  });

  it('fails a change the run did not claim, and a swapped patch artifact', async () => {
    fs.writeFileSync(path.join(dir, 'README.md'), 'edited by hand\n');
    try {
      const r = await runVerifier(request, VERIFY_MS);
      expect(r.failures.join('\n')).toMatch(/files changed that the run did not claim: README\.md/);
    } finally {
      gitIn(dir, 'checkout', '--', 'README.md');
    }
    const r = await runVerifier({ ...request, claim: { ...request.claim, patch_sha256: 'f'.repeat(64) } }, VERIFY_MS);
    expect(r.failures.join('\n')).toMatch(/the patch artifact is not the patch the run proposed/);
  });

  it('a malformed request is a failed verification, not a crash', async () => {
    const r = await runVerifier({ ...request, tool: 'nope' } as unknown as VerifyRequest, VERIFY_MS);
    expect(r).toMatchObject({ passed: false });
    expect(r.failures[0]).toMatch(/bad verify request/);
  });
});
