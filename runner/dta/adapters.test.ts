import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { dtaPassed, type DtaInvocationInput, type DtaOutput } from '../../protocol';
import { runDta } from './engine';
import { gitIn, JSON_FILES, JSON_SCHEMA, makeRepo, movedDocsRepo, SITE_FILES, TS_FILES } from './testing/fixture-repos';

// Each run starts a verifier process (tsx); a loaded 2-core machine needs minutes, not seconds.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const repos: string[] = [];
afterAll(() => repos.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
function repo(files: Record<string, string>): string {
  const d = makeRepo(files);
  repos.push(d);
  return d;
}

const read = (dir: string, rel: string) => fs.readFileSync(path.join(dir, rel), 'utf8');
const patchOf = (dir: string, out: DtaOutput) => read(dir, out.artifacts.find((a) => a.endsWith('.patch'))!);

function inv(tool: DtaInvocationInput['tool'], dir: string, params: Record<string, unknown>, mode: 'dry-run' | 'apply' = 'dry-run', glob?: string): DtaInvocationInput {
  return { tool, version: '1.0', mode, target: { repo_path: dir, ...(glob ? { glob } : {}) }, params };
}

const LINKS = { from_hosts: ['http://old.example.com', 'https://old.example.com'], to_host: 'https://new.example.com' };

describe('link_updater', () => {
  it('dry-run proposes every link through the parsers and changes nothing; apply rewrites them and the verifier re-counts 0', async () => {
    const dir = repo(SITE_FILES);
    const dry = await runDta(inv('link_updater', dir, LINKS, 'dry-run', 'site/**'));
    expect(dtaPassed(dry)).toBe(true);
    expect(dry.proposed_changes).toEqual({ files: 3, link_updates: 15 });
    expect(gitIn(dir, 'status', '--porcelain')).toBe('');
    const patch = patchOf(dir, dry);
    expect(patch).toContain('+<a href="https://new.example.com/about?x=1#team">About</a>');
    expect(patch).toContain('+[ref]: https://new.example.com/reference "Ref"');
    expect(patch).not.toMatch(/^\+.*evil\.net/m);

    const applied = await runDta(inv('link_updater', dir, LINKS, 'apply', 'site/**'));
    expect(applied).toMatchObject({ ok: true, phase: 'verify', applied_changes: { files: 3, link_updates: 15 } });
    expect(applied.verifier).toMatchObject({ passed: true, measured: { after: { links_to_update: 0, links_total: 17, files_parsed: 3 } } }); // untouched.html, with no old host, is not parsed
    const html = read(dir, 'site/index.html');
    expect(html).toContain('<!-- <a href="http://old.example.com/commented">'); // a comment is not a link
    expect(html).toContain('https://old.example.com.evil.net/'); // another host
    expect(read(dir, 'site/docs/guide.md')).toContain('`http://old.example.com/in-code`');
    expect(read(dir, 'site/css/site.css')).toContain('"http://old.example.com/string"');
    expect(read(dir, 'README.md')).toContain('http://old.example.com/readme'); // outside the glob
    expect(applied.artifacts.map((a) => a.replace(/.*\d{8}T\d{6}Z-/, ''))).toEqual(['baseline.json', 'proposed.patch', 'proposed.json', 'applied.json', 'verify.json']);
    // Artifacts stay out of commits.
    expect(gitIn(dir, 'status', '--porcelain', '--untracked-files=all').split('\n').filter((l) => l.includes('.runs'))).toEqual([]);
  });

  it('is deterministic: the same tree and inputs give a byte-identical patch', async () => {
    const a = repo(SITE_FILES);
    const b = repo(SITE_FILES);
    const first = await runDta(inv('link_updater', a, LINKS));
    const second = await runDta(inv('link_updater', a, LINKS));
    const elsewhere = await runDta(inv('link_updater', b, LINKS));
    expect(first.patch_sha256).toBe(second.patch_sha256);
    expect(first.patch_sha256).toBe(elsewhere.patch_sha256);
    expect(patchOf(a, first)).toBe(patchOf(b, elsewhere));
  });
});

describe('json_schema_migrator', () => {
  it('fixes renamed keys, missing defaults and types, reports the rest; re-validation agrees', async () => {
    const dir = repo(JSON_FILES);
    const params = { schema: JSON_SCHEMA, renames: { title: 'name' } };
    const dry = await runDta(inv('json_schema_migrator', dir, params));
    expect(dry.baseline).toMatchObject({ files_scanned: 5, files_invalid: 3, files_unparseable: 1 });
    expect(dry.proposed_changes).toEqual({ files: 2, files_fixed: 2 });
    expect(dry.notes.join('\n')).toMatch(/config\/broken\.json: not fixable/);
    expect(dtaPassed(dry)).toBe(true);
    const applied = await runDta(inv('json_schema_migrator', dir, params, 'apply'));
    expect(dtaPassed(applied)).toBe(true);
    expect(JSON.parse(read(dir, 'config/a.json'))).toEqual({ name: 'a', port: 8080, enabled: true });
    expect(read(dir, 'config/b.json')).toBe('{\n    "name": "b",\n    "port": 81,\n    "enabled": true\n}\n');
    expect(applied.verifier.measured?.after).toMatchObject({ files_invalid: 1, files_unparseable: 1 });
  });
});

describe('rename_refactor', () => {
  it('renames the symbol and its references through the AST, not strings, comments or another symbol', async () => {
    const dir = repo(TS_FILES);
    const params = { from: 'addNumbers', to: 'sum', declared_in: 'src/math.ts' };
    const dry = await runDta(inv('rename_refactor', dir, params));
    expect(dry.error).toBeUndefined();
    expect(dry.proposed_changes).toEqual({ files: 2, occurrences_renamed: 4 });
    const applied = await runDta(inv('rename_refactor', dir, params, 'apply'));
    expect(dtaPassed(applied)).toBe(true);
    expect(read(dir, 'src/main.ts')).toBe("import { sum } from './math';\n\n// addNumbers is documented here\nconst label = 'addNumbers';\nexport const total = sum(1, 2) + sum(3, 4);\nexport { label };\n");
    expect(read(dir, 'src/other.js')).toBe(TS_FILES['src/other.js']);
  });

  it('an ambiguous name is refused in words', async () => {
    const dir = repo(TS_FILES);
    const out = await runDta(inv('rename_refactor', dir, { from: 'addNumbers', to: 'sum' }));
    expect(out).toMatchObject({ ok: false, error: { code: 'ADAPTER_FAILED' } });
    expect(out.error?.message).toMatch(/declared more than once .*declared_in/);
  });
});

describe('intra_repo_link_fixer', () => {
  it('fixes links and #anchors to moved files (git renames since a revision); every local target exists after', async () => {
    const dir = movedDocsRepo();
    repos.push(dir);
    const applied = await runDta(inv('intra_repo_link_fixer', dir, { since: 'HEAD~1' }, 'apply'));
    expect(applied.error).toBeUndefined();
    expect(applied.baseline).toMatchObject({ local_links_broken: 5 });
    expect(applied.applied_changes).toEqual({ files: 2, links_fixed: 5 });
    expect(dtaPassed(applied)).toBe(true);
    expect(read(dir, 'docs/index.md')).toBe('# Index\n\nRead [the guide](handbook/guide.md#install) and [setup](./setup.md).\n\n![diagram](assets/img/diagram.png)\n\n[ref]: handbook/guide.md\n');
    expect(read(dir, 'docs/handbook/guide.md')).toContain('Back to [index](../index.md). See [setup](../setup.md#usage).');
  });

  it('a link no move explains stays broken: the verifier says so', async () => {
    const dir = repo({ 'a.md': '[x](missing.md)\n' });
    const out = await runDta(inv('intra_repo_link_fixer', dir, {}, 'apply'));
    expect(out.ok).toBe(true);
    expect(out.verifier.passed).toBe(false);
    expect(out.verifier.failures.join()).toMatch(/1 local links still point to nothing/);
    expect(dtaPassed(out)).toBe(false);
  });
});
