import fs from 'node:fs';
import path from 'node:path';
import { applyPatch, parsePatch } from 'diff';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { extractLinks, linksKnown } from '../adapters/link-updater/links';
import { parseLinks, useReaders } from '../adapters/link-updater/parsers';
import { sha256 } from '../git-state';
import { applyPatchInMemory, buildPatch, fileParts, type KnownPart } from '../patch';
import { DEFAULT_POLICY } from '../policy';
import { benchSite } from '../testing/bench-site';
import { gitIn, makeRepo, SITE_FILES } from '../testing/fixture-repos';
import { EXPECT_BATCH_FILES, expectParts } from './expected-parts';
import { expectationSettled, expectedPartsFor, prepare, verify, type VerifyRequest } from './verify';

const LINKS = { from_hosts: ['http://old.example.com', 'https://old.example.com'], to_host: 'https://new.example.com' };
/** The fixtures, a slice of the bench's site, and a page with CR LF line ends. */
const FILES: Record<string, string> = {
  ...SITE_FILES,
  ...benchSite(60, 3),
  'site/crlf.html': '<p>a</p>\r\n<a href="http://old.example.com/x">x</a>\r\n<p>b</p>\r\n',
};

/**
 * The adapter's proposal, made by a module graph of its own (its parsers, its parse cache), as the
 * runner's process would: this file's modules read as the verifier does.
 */
async function proposal(files: Record<string, string>): Promise<{ before: Map<string, string>; changes: Map<string, string>; patch: string }> {
  vi.resetModules();
  const { linkUpdater } = await import('../adapters/link-updater/adapter');
  const before = new Map(Object.entries(files));
  const { changes } = await linkUpdater.propose(before, LINKS, { allFiles: new Set(before.keys()), read: (rel) => before.get(rel), seed: 42 });
  return { before, changes, patch: buildPatch(before, changes) };
}

async function expectedParts(files: Iterable<readonly [string, string]>, params: Record<string, unknown>): Promise<Map<string, KnownPart>> {
  const parts = new Map<string, KnownPart>();
  await expectParts(files, params, parts, () => false);
  return parts;
}

// The verifier reads with its own parsers (verifier/main.ts); so does this file.
beforeAll(() => useReaders('verifier'));
afterAll(() => useReaders('adapter'));

describe("the verifier's expected patch parts", () => {
  it('each make, applied by jsdiff to HEAD, exactly the text they stand for', async () => {
    const parts = await expectedParts(Object.entries(FILES), LINKS);
    expect(parts.size).toBeGreaterThan(40);
    for (const [part, { rel, after }] of parts) {
      const [p, ...more] = parsePatch(part);
      expect(more, rel).toEqual([]);
      expect(p!.newFileName).toBe(`b/${rel}`);
      expect(applyPatch(FILES[rel]!, p!), rel).toBe(after);
    }
  });

  it("read an honest proposal's patch as jsdiff does, taking the parts they know without it", async () => {
    const { before, changes, patch } = await proposal(FILES);
    const parts = await expectedParts(before, LINKS);
    const read = (rel: string) => before.get(rel);
    const known = fileParts(patch).filter((p) => parts.has(p));
    // Markdown's links have no places in the verifier's reading: its parts are known by every
    // spelling of a host swapped (the bench's pages), the others (a host in prose, escapes) are jsdiff's.
    expect(known.length).toBeGreaterThan(20);
    const markdown = [...changes.keys()].filter((rel) => rel.endsWith('.md'));
    expect(markdown.filter((rel) => /^site\/s\d+\//.test(rel)).every((rel) => known.some((p) => parts.get(p)!.rel === rel))).toBe(true);
    expect(markdown.some((rel) => !known.some((p) => parts.get(p)!.rel === rel))).toBe(true);
    expect(known.length).toBeLessThan(changes.size);
    expect(fileParts(patch).join('')).toBe(patch);
    const fast = applyPatchInMemory(patch, read, parts);
    expect(fast).toEqual(applyPatchInMemory(patch, read));
    expect(fast.ok && Object.fromEntries(fast.files)).toEqual(Object.fromEntries(changes));
  });

  it("know a Markdown part's text by its own parse, never by a derivation", async () => {
    const site = benchSite(30, 5);
    const parts = await expectedParts(Object.entries(site), LINKS);
    const markdown = [...parts.values()].filter((p) => p.rel.endsWith('.md'));
    expect(markdown.length).toBe(10);
    for (const { rel, after } of markdown) {
      expect(linksKnown(rel, after), rel).toBe(true);
      expect(extractLinks(rel, after)).toEqual(parseLinks(rel, after));
    }
  });

  it('leave a part changed by a single byte to jsdiff, and fail a file changed twice', async () => {
    const { before, patch } = await proposal(FILES);
    const parts = await expectedParts(before, LINKS);
    const read = (rel: string) => before.get(rel);
    const part = fileParts(patch).find((p) => parts.has(p) && p.includes('+<a href="https://new.example.com/p'))!;
    const { rel } = parts.get(part)!;
    const tampered = patch.replace(part, part.replace('+<a href="https://new.example.com/p', '+<a href="https://evil.example.com/p'));
    const fast = applyPatchInMemory(tampered, read, parts);
    expect(fast).toEqual(applyPatchInMemory(tampered, read));
    expect(fast.ok && fast.files.get(rel)).toMatch(/evil\.example\.com/);
    expect(applyPatchInMemory(patch + part, read, parts)).toEqual({ ok: false, reason: `${rel}: changed twice by the patch` });
    expect(applyPatchInMemory(patch + part, read)).toEqual({ ok: false, reason: `${rel}: changed twice by the patch` });
  });


  it('stop when the proposal comes, and leave the parts not reached to jsdiff', async () => {
    const site = benchSite(3 * EXPECT_BATCH_FILES, 4);
    const { before, patch } = await proposal(site);
    const parts = new Map<string, KnownPart>();
    let looks = 0;
    await expectParts(before, LINKS, parts, () => ++looks > 1);
    expect(looks).toBe(2);
    // The first batch and the one under way when the proposal was seen: two of three.
    expect(parts.size).toBe(2 * EXPECT_BATCH_FILES - 1);
    expect(parts.size).toBeLessThan(fileParts(patch).length);
    const read = (rel: string) => before.get(rel);
    expect(applyPatchInMemory(patch, read, parts)).toEqual(applyPatchInMemory(patch, read));
  });
});

describe("the verifier's check of a dry-run, with its expectation made by the prepare", () => {
  let dir: string;
  let request: VerifyRequest;
  let patch: string;
  beforeAll(async () => {
    dir = makeRepo(FILES);
    const p = await proposal(FILES);
    patch = p.patch;
    fs.writeFileSync(path.join(dir, '.git', 'proposed.patch'), patch);
    const head = gitIn(dir, 'rev-parse', 'HEAD').trim();
    const params = { ...LINKS };
    await prepare({ mode: 'prepare', tool: 'link_updater', root: dir, head, params, globs: ['site/**'], allowed_paths: DEFAULT_POLICY.allowed_paths });
    await expectationSettled();
    const before = await verify({ mode: 'proposed', tool: 'link_updater', root: dir, params, globs: ['site/**'], allowed_paths: DEFAULT_POLICY.allowed_paths, seed: 42, claim: { head, baseline: {}, units: 0, files: [], patch_path: path.join(dir, '.git', 'proposed.patch'), patch_sha256: sha256(patch), hashes: {} } });
    const baseline = before.measured!.before;
    const units = baseline.links_to_update!;
    request = { mode: 'proposed', tool: 'link_updater', root: dir, params, globs: ['site/**'], allowed_paths: DEFAULT_POLICY.allowed_paths, seed: 42, claim: { head, baseline, units, files: [...p.changes.keys()].sort(), patch_path: path.join(dir, '.git', 'proposed.patch'), patch_sha256: sha256(patch), hashes: {} } };
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('passes the honest proposal, whose HTML and CSS parts it expected', async () => {
    const known = expectedPartsFor(dir, request.claim.head, request.params);
    expect(fileParts(patch).filter((p) => known?.has(p)).length).toBeGreaterThan(20);
    expect(await verify(request)).toMatchObject({ passed: true, failures: [] });
  });

  it("fails a forged baseline, counted from the prepare's measure of HEAD", async () => {
    const forged = { ...request.claim.baseline, links_to_update: request.claim.baseline.links_to_update! + 1 };
    const r = await verify({ ...request, claim: { ...request.claim, baseline: forged } });
    expect(r.passed).toBe(false);
    expect(r.failures.join('\n')).toMatch(/baseline does not match the files at HEAD: links_to_update claimed \d+, measured \d+/);
    expect(r.measured?.before).toEqual(request.claim.baseline);
  });

  it('fails a part the verifier knew, changed to move a link elsewhere (with the patch hash claimed for it)', async () => {
    const part = fileParts(patch).find((p) => p.includes('+<a href="https://new.example.com/p'))!;
    const tampered = patch.replace(part, part.replace('+<a href="https://new.example.com/p', '+<a href="https://evil.example.com/p'));
    const file = path.join(dir, '.git', 'tampered.patch');
    fs.writeFileSync(file, tampered);
    const r = await verify({ ...request, claim: { ...request.claim, patch_path: file, patch_sha256: sha256(tampered) } });
    expect(r.passed).toBe(false);
    expect(r.failures.join('\n')).toMatch(/links to the new host grew by \d+, expected \d+/);
  });
});
