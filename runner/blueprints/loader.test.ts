import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../log';
import { BlueprintCatalog } from './catalog';
import { loadBlueprints } from './loader';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'av-bp-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const write = (file: string, body: unknown) => fs.writeFileSync(path.join(dir, file), typeof body === 'string' ? body : JSON.stringify(body));
const good = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `${name} does things`,
  command: 'python3 -m tool',
  parameters_schema: { type: 'object', required: ['url'], properties: { url: { type: 'string', format: 'uri' }, depth: { type: 'integer', default: 2 } } },
  ...extra,
});

describe('loadBlueprints', () => {
  it('loads the good files and reports each bad one with its name and reason', async () => {
    write('a-crawler.json', good('web-crawler'));
    write('b-backup.json', good('db-backup', { timeout_seconds: 20, project_dir: '.' }));
    write('broken.json', '{ "name": "x", ');
    write('no-command.json', { name: 'nocmd', description: '', parameters_schema: { type: 'object' } });
    write('bad-schema.json', good('bad-schema', { parameters_schema: { type: 'object', properties: { n: { type: 'integer', minimum: 'zero' } } } }));
    write('not-object.json', good('not-object', { parameters_schema: { type: 'string' } }));
    write('pipe.json', good('piped', { command: 'cat file | wc -l' }));
    write('typo.json', { ...good('typo'), parameter_schema: {} });
    write('dup.json', good('web-crawler'));
    write('bad-name.json', good('has space'));
    write('nowhere.json', good('nowhere', { project_dir: 'does/not/exist' }));
    write('README.md', '# not a blueprint');
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.writeFileSync(path.join(dir, 'sub', 'nested.json'), JSON.stringify(good('nested')));

    const { blueprints, problems } = await loadBlueprints(dir);
    expect(blueprints.map((b) => b.name)).toEqual(['web-crawler', 'db-backup']);
    expect(blueprints[0]).toMatchObject({ command: 'python3 -m tool', timeout_seconds: 300, project_dir: dir });
    expect(blueprints[1]!.timeout_seconds).toBe(20);
    const why = Object.fromEntries(problems.map((p) => [p.file, p.reason]));
    expect(Object.keys(why).sort()).toEqual(['bad-name.json', 'bad-schema.json', 'broken.json', 'dup.json', 'no-command.json', 'not-object.json', 'nowhere.json', 'pipe.json', 'typo.json']);
    expect(why['broken.json']).toMatch(/not valid JSON/);
    expect(why['no-command.json']).toMatch(/command/);
    expect(why['bad-schema.json']).toMatch(/parameters_schema/);
    expect(why['not-object.json']).toMatch(/"type": "object"/);
    expect(why['pipe.json']).toMatch(/shell operator "\|"/);
    expect(why['typo.json']).toMatch(/parameter_schema/);
    expect(why['dup.json']).toMatch(/already taken by a-crawler.json/);
    expect(why['bad-name.json']).toMatch(/name/);
    expect(why['nowhere.json']).toMatch(/does not exist/);
  });

  it('keeps all blueprints together under the register message budget', async () => {
    // ~240 KB each (under the per-file limit): nine of them are more than 2 MiB together.
    const big = { type: 'object', description: 'x'.repeat(240_000) };
    for (let i = 0; i < 9; i++) write(`big-${i}.json`, good(`big-${i}`, { parameters_schema: big }));
    const { blueprints, problems } = await loadBlueprints(dir);
    expect(blueprints.length).toBe(8);
    expect(problems).toEqual([{ file: 'big-8.json', reason: expect.stringMatching(/exceed .* bytes together/) }]);
  });

  it('treats a missing folder as no blueprints', async () => {
    expect(await loadBlueprints(path.join(dir, 'missing'))).toEqual({ blueprints: [], problems: [] });
  });
});

describe('BlueprintCatalog', () => {
  it('reloads when the folder changes and validates parameters with the schema', async () => {
    write('crawler.json', good('web-crawler'));
    let changes = 0;
    const catalog = new BlueprintCatalog(dir, silentLogger, () => changes++);
    await catalog.start();
    try {
      expect(catalog.blueprints.map((b) => b.name)).toEqual(['web-crawler']);
      const validate = catalog.validator('web-crawler')!;
      const params: Record<string, unknown> = { url: 'https://example.com' };
      expect(validate(params)).toBe(true);
      expect(params.depth).toBe(2); // defaults are filled in
      expect(validate({ url: 'not a url' })).toBe(false);

      write('backup.json', good('db-backup'));
      write('bad.json', '[]');
      await expect.poll(() => catalog.blueprints.map((b) => b.name), { timeout: 10_000 }).toEqual(['db-backup', 'web-crawler']);
      expect(catalog.problems.map((p) => p.file)).toEqual(['bad.json']);
      expect(changes).toBeGreaterThan(0);

      fs.rmSync(path.join(dir, 'crawler.json'));
      await expect.poll(() => catalog.blueprints.map((b) => b.name), { timeout: 10_000 }).toEqual(['db-backup']);
    } finally {
      catalog.close();
    }
  });
});
