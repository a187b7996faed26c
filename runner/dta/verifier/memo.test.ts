import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { extractLinks, useLinkStore } from '../adapters/link-updater/links';
import { runDta, setVerifierMemoDir } from '../engine';
import { dropKeptProposals } from '../kept-proposals';
import { gitIn, makeRepo, SITE_FILES } from '../testing/fixture-repos';
import { VERIFIER_MEMO_FILE, VerifierMemo, verifierMemoVersion } from './memo';
import { DEFAULT_POLICY } from '../policy';
import { verifiersExited } from './spawn';
import { memoIn, preloadMemo, prepare } from './verify';

// The run below starts two verifier processes (tsx); a loaded 2-core machine needs minutes.
vi.setConfig({ testTimeout: 180_000 });
afterEach(() => setVerifierMemoDir(null));
const LINKS = { from_hosts: ['http://old.example.com', 'https://old.example.com'], to_host: 'https://new.example.com' };

describe("the verifier's memo of parsed links", () => {
  it('a later verifier process reads what an earlier one parsed, by content; another text or another memo version is parsed afresh', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memo-'));
    const file = path.join(dir, 'memo.json');
    const first = VerifierMemo.open(file);
    useLinkStore(first);
    const text = '[a](http://old.example.com/memo-1)\n';
    const links = extractLinks('docs/a.md', text);
    useLinkStore(null);
    first.save();

    const second = VerifierMemo.open(file);
    expect(second.get('markdown', text)).toEqual(links);
    expect(second.get('markdown', `${text} `)).toBeUndefined();
    expect(second.get('html', text)).toBeUndefined();

    // A memo written by another version is ignored (its parsers may have answered differently).
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string };
    expect(saved.version).toBe(verifierMemoVersion());
    fs.writeFileSync(file, JSON.stringify({ ...saved, version: `${saved.version}-other` }));
    const third = VerifierMemo.open(file);
    expect(third.get('markdown', text)).toBeUndefined();
    // An unreadable memo is an empty one.
    fs.writeFileSync(file, '{not json');
    expect(VerifierMemo.open(file).get('markdown', text)).toBeUndefined();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is read before the first request, and read again at it when another verifier saved it since', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memo-'));
    const repo = makeRepo(SITE_FILES);
    const file = path.join(dir, VERIFIER_MEMO_FILE);
    // What a verifier process leaves: the links it parsed, saved as it ends.
    const saved = (text: string) => {
      const memo = VerifierMemo.open(file);
      useLinkStore(memo);
      const links = extractLinks('docs/a.md', text);
      useLinkStore(null);
      memo.save();
      return links;
    };
    try {
      saved('[a](http://old.example.com/memo-early)\n');
      preloadMemo(dir);
      const early = await memoIn(dir);
      expect(early.outdated()).toBe(false);
      // The run that just ended saves after this process read the memo.
      const late = '[b](http://old.example.com/memo-late)\n';
      const links = saved(late);
      expect(early.outdated()).toBe(true);
      const head = gitIn(repo, 'rev-parse', 'HEAD').trim();
      await prepare({ mode: 'prepare', tool: 'link_updater', root: repo, head, params: LINKS, globs: ['site/**'], allowed_paths: DEFAULT_POLICY.allowed_paths, memo_dir: dir });
      const used = await memoIn(dir);
      expect(used).not.toBe(early);
      expect(used.get('markdown', late)).toEqual(links);
      // Used now: a later save by another process no longer replaces it under this one.
      saved('[c](http://old.example.com/memo-later)\n');
      expect(used.outdated()).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(repo, { recursive: true, force: true });
    }
  });

  it("lives in the runner's folder (0600), never in the repository's git dir where a session could forge it", async () => {
    const repo = makeRepo(SITE_FILES);
    const runnerData = fs.mkdtempSync(path.join(os.tmpdir(), 'runner-data-'));
    const memoDir = path.join(runnerData, 'dta');
    try {
      setVerifierMemoDir(memoDir);
      const inv = (mode: 'dry-run' | 'apply') => ({ tool: 'link_updater', version: '1.0', mode, target: { repo_path: repo, glob: 'site/**' }, params: LINKS });
      expect((await runDta(inv('dry-run'))).verifier.passed).toBe(true);
      // The dry-run's verifier is kept for its apply and writes the memo when the runner is done
      // with it — here, as when the kept proposal expires, before the apply comes.
      dropKeptProposals();
      await verifiersExited();
      const memoFile = path.join(memoDir, VERIFIER_MEMO_FILE);
      expect(fs.statSync(memoFile).mode & 0o777).toBe(0o600);
      expect(fs.statSync(memoDir).mode & 0o777).toBe(0o700);
      const gitDir = path.join(repo, gitIn(repo, 'rev-parse', '--git-common-dir').trim());
      expect(fs.readdirSync(gitDir, { recursive: true }).map(String).filter((f) => f.includes('memo'))).toEqual([]);
      // A fresh verifier for the apply reads the dry-run's parses (the same texts) and still passes.
      expect((await runDta(inv('apply'))).verifier).toMatchObject({ passed: true, failures: [] });
    } finally {
      fs.rmSync(repo, { recursive: true, force: true });
      fs.rmSync(runnerData, { recursive: true, force: true });
    }
  });
});
