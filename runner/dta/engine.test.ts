import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { DtaInvocationInput } from '../../protocol';
import { FAULT_ENV } from './atomic-apply';
import { runDta } from './engine';
import { DtaPolicySchema } from './policy';
import { gitIn, makeRepo, SITE_FILES, snapshot } from './testing/fixture-repos';

// Each run starts a verifier process (tsx); a loaded 2-core machine needs minutes, not seconds.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const repos: string[] = [];
afterAll(() => repos.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
function repo(files: Record<string, string> = SITE_FILES): string {
  const d = makeRepo(files);
  repos.push(d);
  return d;
}
const LINKS = { from_hosts: ['http://old.example.com', 'https://old.example.com'], to_host: 'https://new.example.com' };
const inv = (dir: string, mode: 'dry-run' | 'apply' = 'apply', params: Record<string, unknown> = LINKS): DtaInvocationInput => ({ tool: 'link_updater', version: '1.0', mode, target: { repo_path: dir, glob: 'site/**' }, params });
const CLI = path.join(import.meta.dirname, 'cli.ts');

/** The next run on the tree rolls a crashed apply back first: the tree as `before`. */
async function expectRolledBackByNextRun(dir: string, before: Record<string, string>): Promise<void> {
  const next = await runDta(inv(dir, 'dry-run'));
  expect(next.notes.join('\n')).toMatch(/rolled back the unfinished apply of dta_/);
  expect(snapshot(dir)).toEqual(before);
}

/** An apply through `av-dta run` in a process of its own with a fault injected: how it ended, and what it printed. */
async function applyInCli(dir: string, fault: string): Promise<{ signal: NodeJS.Signals | null; stdout: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'run', '-'], { env: { ...process.env, [FAULT_ENV]: fault }, stdio: ['pipe', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stdin.end(JSON.stringify(inv(dir)));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
  return { signal, stdout };
}

describe('DTA runs: tree safety', () => {
  it('refuses a dirty tree and changes nothing', async () => {
    const dir = repo();
    fs.writeFileSync(path.join(dir, 'scratch.txt'), 'uncommitted');
    const before = snapshot(dir);
    const out = await runDta(inv(dir));
    expect(out.error).toMatchObject({ code: 'DIRTY_TREE' });
    expect(snapshot(dir)).toEqual(before);
  });

  it('fails when the tree changes between discover and apply, and applies nothing', async () => {
    const dir = repo();
    const out = await runDta(inv(dir), {
      onPhase: (phase) => {
        if (phase === 'started') fs.writeFileSync(path.join(dir, 'README.md'), 'someone else was here\n');
      },
    });
    expect(out.error).toMatchObject({ code: 'TREE_CHANGED' });
    expect(fs.readFileSync(path.join(dir, 'site/index.html'), 'utf8')).toBe(SITE_FILES['site/index.html']);
  });

  it('an apply keeps every file mode, a group-writable one too (the umask must not narrow it)', async () => {
    const dir = repo();
    // git ignores these bits (only 644/755 are tracked), so the tree stays clean for the run.
    fs.chmodSync(path.join(dir, 'site/index.html'), 0o664);
    fs.chmodSync(path.join(dir, 'site/css/site.css'), 0o600);
    // The fixture wrote this one under the process's umask: its mode is set here, not assumed.
    fs.chmodSync(path.join(dir, 'site/docs/guide.md'), 0o644);
    const out = await runDta(inv(dir));
    expect(out.ok).toBe(true);
    expect(out.files).toEqual(expect.arrayContaining(['site/index.html', 'site/css/site.css']));
    expect(fs.statSync(path.join(dir, 'site/index.html')).mode & 0o7777).toBe(0o664);
    expect(fs.statSync(path.join(dir, 'site/css/site.css')).mode & 0o7777).toBe(0o600);
    expect(fs.statSync(path.join(dir, 'site/docs/guide.md')).mode & 0o7777).toBe(0o644);
  });

  it('a failure half-way through apply leaves the tree byte-identical', async () => {
    const dir = repo();
    const before = snapshot(dir);
    process.env[FAULT_ENV] = 'throw-after:2';
    try {
      const out = await runDta(inv(dir));
      expect(out.error).toMatchObject({ code: 'APPLY_FAILED' });
      expect(out.error?.message).toMatch(/rolled back/);
    } finally {
      delete process.env[FAULT_ENV];
    }
    expect(snapshot(dir)).toEqual(before);
  });

  it('a crash (SIGKILL) half-way through apply is rolled back by the next run: the tree is byte-identical', async () => {
    const dir = repo();
    const before = snapshot(dir);
    expect((await applyInCli(dir, 'kill-after:1')).signal).toBe('SIGKILL');
    expect(snapshot(dir)).not.toEqual(before); // one file renamed, temps lying around
    await expectRolledBackByNextRun(dir, before);
  });

  it("a crash's recovery takes every original from git's objects: the apply kept no backup file beside its journal", async () => {
    const dir = repo();
    const before = snapshot(dir);
    expect((await applyInCli(dir, 'kill-after:2')).signal).toBe('SIGKILL');
    const journals = path.join(gitIn(dir, 'rev-parse', '--absolute-git-dir').trim(), 'agent-village-dta', 'journal');
    const [run] = fs.readdirSync(journals);
    // Nothing but the journal: every original is HEAD's blob (the run began on a clean tree).
    expect(fs.readdirSync(path.join(journals, run!))).toEqual(['journal.json']);
    expect(snapshot(dir)).not.toEqual(before);
    await expectRolledBackByNextRun(dir, before);
    expect(fs.readdirSync(journals)).toEqual([]);
  });

  it('a crash (SIGKILL) after every rename, while the new contents are flushed, is rolled back by the next run: the tree is byte-identical', async () => {
    const dir = repo();
    const before = snapshot(dir);
    const crashed = await applyInCli(dir, 'kill-in-flush');
    expect(crashed.signal).toBe('SIGKILL');
    // Never reported: an apply is complete only once its new contents are on disk.
    expect(crashed.stdout).toBe('');
    expect(snapshot(dir)).not.toEqual(before);
    await expectRolledBackByNextRun(dir, before);
  });

  it('a flush of the new contents that fails rolls the apply back: the run fails, reports no applied phase, and the tree is byte-identical', async () => {
    const dir = repo();
    const before = snapshot(dir);
    const phases: string[] = [];
    process.env[FAULT_ENV] = 'fail-flush';
    try {
      const out = await runDta(inv(dir), { onPhase: (phase) => phases.push(phase) });
      expect(out.error).toMatchObject({ code: 'APPLY_FAILED', message: expect.stringMatching(/rolled back.*injected flush failure/) });
      expect(out.ok).toBe(false);
    } finally {
      delete process.env[FAULT_ENV];
    }
    expect(phases).not.toContain('applied');
    expect(snapshot(dir)).toEqual(before);
  });

  it("a run's recovery leaves another run's apply in flight in the same worktree alone (its owner is alive): that apply finishes and verifies", async () => {
    const dir = repo();
    const before = snapshot(dir);
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'run', '-'], { env: { ...process.env, [FAULT_ENV]: 'stop-after:1' }, stdio: ['pipe', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.stdin.end(JSON.stringify(inv(dir)));
    const state = () => {
      const stat = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    };
    try {
      // Stopped after its first rename: its journal on disk, its process alive.
      await expect.poll(state, { timeout: 170_000, interval: 50 }).toBe('T');
      const other = await runDta(inv(dir, 'dry-run'));
      expect(other.notes.join('\n')).not.toMatch(/rolled back/);
      // It finds the tree as the apply in flight left it (one file renamed): dirty, so it does nothing.
      expect(other.error).toMatchObject({ code: 'DIRTY_TREE' });
    } finally {
      child.kill('SIGCONT');
    }
    expect(await exited).toBe(0);
    const out = JSON.parse(stdout) as { ok: boolean; verifier: { passed: boolean }; files: string[] };
    expect(out.ok && out.verifier.passed).toBe(true);
    const changed = gitIn(dir, 'diff', '--name-only').trim().split('\n').sort();
    expect(changed).toEqual([...out.files].sort());
    expect(snapshot(dir)).not.toEqual(before);
  });

  it('an apply leaves nothing behind in its journal folder; what an older runner left of a finished apply (its backups, no journal) goes with the next run, which rolls nothing back', async () => {
    const dir = repo();
    const out = await runDta(inv(dir));
    expect(out.ok && out.verifier.passed).toBe(true);
    const journals = path.join(gitIn(dir, 'rev-parse', '--absolute-git-dir').trim(), 'agent-village-dta', 'journal');
    expect(fs.readdirSync(journals)).toEqual([]);
    gitIn(dir, 'commit', '-qam', 'applied');
    // A runner (from before git held the backups) that died while removing a finished apply's hard links: its folder, without a journal.
    fs.mkdirSync(path.join(journals, 'dta_finished.done', 'backup'), { recursive: true });
    fs.writeFileSync(path.join(journals, 'dta_finished.done', 'backup', '0'), SITE_FILES['site/index.html']!);
    const applied = snapshot(dir);
    const next = await runDta(inv(dir, 'dry-run'));
    expect(next.ok).toBe(true);
    expect(next.notes.join('\n')).not.toMatch(/rolled back/);
    expect(fs.readdirSync(journals)).toEqual([]);
    expect(snapshot(dir)).toEqual(applied);
  });

  it('an apply bound to an approved patch refuses a different proposal', async () => {
    const dir = repo();
    const out = await runDta({ ...inv(dir), expected_patch_sha256: '0'.repeat(64) });
    expect(out.error).toMatchObject({ code: 'PATCH_MISMATCH' });
    expect(gitIn(dir, 'status', '--porcelain')).toBe('');
  });
});

describe('DTA runs: policy', () => {
  it('max_files, approved tools, allowed paths and the rate limit', async () => {
    const dir = repo();
    expect((await runDta({ ...inv(dir, 'dry-run'), constraints: { max_files: 2 } })).error?.message).toMatch(/4 files match, max_files is 2/);
    const onlyMigrator = DtaPolicySchema.parse({ approved_tools: ['json_schema_migrator'] });
    expect((await runDta(inv(dir, 'dry-run'), { policy: onlyMigrator })).error).toMatchObject({ code: 'POLICY', message: expect.stringMatching(/not an approved DTA/) });
    const docsOnly = DtaPolicySchema.parse({ allowed_paths: ['site/docs/**'] });
    const scoped = await runDta(inv(dir, 'dry-run'), { policy: docsOnly });
    expect(scoped.files).toEqual(['site/docs/guide.md']);
    expect(scoped.verifier.passed).toBe(true);
    const twoPerMinute = DtaPolicySchema.parse({ rate_limit: { max_runs: 2, window_ms: 60_000 } });
    const other = repo();
    await runDta(inv(other, 'dry-run'), { policy: twoPerMinute });
    await runDta(inv(other, 'dry-run'), { policy: twoPerMinute });
    expect((await runDta(inv(other, 'dry-run'), { policy: twoPerMinute })).error?.message).toMatch(/rate limit: 2 DTA runs per 60 s/);
  });
});

describe('link_updater HTTP sample (loopback only)', () => {
  it('samples rewritten links with the seed and fails on a 404', async () => {
    const server = http.createServer((req, res) => {
      res.statusCode = req.url?.startsWith('/missing') ? 404 : 200;
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const to = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const good = repo({ 'site/a.html': '<a href="http://old.example.com/one">1</a><a href="http://old.example.com/two">2</a>\n' });
      const ok = await runDta(inv(good, 'apply', { ...LINKS, to_host: to, sample_http: { size: 2 } }));
      expect(ok.verifier).toMatchObject({ passed: true, sample_size: 2 });
      expect(ok.verifier.checks).toContain('no_404s_sampled');
      const bad = repo({ 'site/a.html': '<a href="http://old.example.com/missing/page">gone</a>\n' });
      const out = await runDta(inv(bad, 'apply', { ...LINKS, to_host: to, sample_http: { size: 5 } }));
      expect(out.verifier.passed).toBe(false);
      expect(out.verifier.failures.join()).toMatch(/\/missing\/page answered 404/);
    } finally {
      server.close();
    }
  });
});

describe('link_updater: HTML attributes written with character references', () => {
  it('moves a link whose query has &amp; (the rest stays as written) and verifies; a host written with references is left and reported', async () => {
    const dir = repo({
      'site/q.html': '<a href="https://old.example.com/search?q=1&amp;page=2">s</a>\n<a href="https://old&#46;example.com/x">e</a>\n',
    });
    const out = await runDta(inv(dir));
    expect(out.verifier).toMatchObject({ passed: true });
    const html = fs.readFileSync(path.join(dir, 'site/q.html'), 'utf8');
    expect(html).toContain('href="https://new.example.com/search?q=1&amp;page=2"');
    // The entity-written host is not what the parser compares (attributes are compared as written): untouched.
    expect(html).toContain('href="https://old&#46;example.com/x"');
  });
});
