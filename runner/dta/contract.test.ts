import fs from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DtaInvocationSchema, DtaOutputSchema } from '../../protocol';
import { checkInvocationJson, checkOutputJson, toolJsonSchema, TOOLS } from './contract';
import { runDta } from './engine';
import { makeRepo, SITE_FILES } from './testing/fixture-repos';

// Each run starts a verifier process (tsx); a loaded 2-core machine needs minutes, not seconds.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

/** The contract's own example (deterministic-tool-adapters.md "Invocation"). */
const SPEC_EXAMPLE = {
  tool: 'link_updater',
  version: '1.0',
  mode: 'dry-run',
  target: { repo_path: 'path/to/site', glob: 'site/**/*.html' },
  params: { from_hosts: ['http://old.example.com', 'https://old.example.com'], to_host: 'https://new.example.com' },
  constraints: { max_files: 5000, timeout_ms: 300000, seed: 42 },
};

const repos: string[] = [];
afterAll(() => repos.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('DTA contract', () => {
  it("accepts the spec's invocation in zod and in JSON Schema alike", () => {
    expect(DtaInvocationSchema.safeParse(SPEC_EXAMPLE).success).toBe(true);
    expect(checkInvocationJson(SPEC_EXAMPLE)).toBeNull();
  });

  it('refuses an unknown tool, a bad mode and free-form fields, in both', () => {
    for (const bad of [{ ...SPEC_EXAMPLE, tool: 'sed' }, { ...SPEC_EXAMPLE, mode: 'yolo' }, { ...SPEC_EXAMPLE, prose: 'please' }, { ...SPEC_EXAMPLE, version: '2.0' }]) {
      expect(DtaInvocationSchema.safeParse(bad).success).toBe(false);
      expect(checkInvocationJson(bad)).not.toBeNull();
    }
  });

  it('every tool publishes a params schema that compiles', () => {
    for (const t of TOOLS) expect(toolJsonSchema(t).params).toMatchObject({ type: 'object' });
  });

  it('a run answers with output JSON that passes zod and the JSON Schema; bad params are a clear error', async () => {
    const dir = makeRepo(SITE_FILES);
    repos.push(dir);
    const out = await runDta({ ...SPEC_EXAMPLE, target: { repo_path: dir, glob: 'site/**' } });
    expect(out.ok).toBe(true);
    expect(DtaOutputSchema.safeParse(out).success).toBe(true);
    expect(checkOutputJson(JSON.parse(JSON.stringify(out)))).toBeNull();
    // untouched.html holds no old host: scanned by its bytes, not parsed, its link not counted.
    expect(out.baseline).toMatchObject({ files_scanned: 4, files_parsed: 3, links_total: 17, links_to_update: 15 });
    expect(out.applied_changes).toEqual({ files: 0, link_updates: 0 });

    const bad = await runDta({ ...SPEC_EXAMPLE, target: { repo_path: dir }, params: { from_hosts: ['not a url'], to_host: 'https://x' } });
    expect(bad.ok).toBe(false);
    expect(bad.error?.code).toBe('BAD_INVOCATION');
    expect(bad.error?.message).toMatch(/params: from_hosts\.0: must match pattern/);
    expect(checkOutputJson(JSON.parse(JSON.stringify(bad)))).toBeNull();

    const unknown = await runDta({ tool: 'rm_rf' });
    expect(unknown).toMatchObject({ ok: false, tool: 'rm_rf', error: { code: 'BAD_INVOCATION' } });
  });
});
