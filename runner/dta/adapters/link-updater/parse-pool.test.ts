import os from 'node:os';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { SITE_FILES } from '../../testing/fixture-repos';
import { extractLinksMany } from './links';
import { PARSE_THREADS_ENV, parseInWorkers, POOL_BATCH_FILES, POOL_MIN_FILES, poolSize, stopParsePool } from './parse-pool';
import { parseLinks } from './parsers';

// A worker thread loads tsx and the parsers before it helps; a loaded 2-core machine needs time.
vi.setConfig({ testTimeout: 120_000 });
afterAll(() => stopParsePool());

/** Every kind of file the site fixture has, many times over, each copy a little different. */
function manyFiles(n: number): Array<[string, string]> {
  const kinds = Object.entries(SITE_FILES);
  return Array.from({ length: n }, (_, i) => {
    const [rel, text] = kinds[i % kinds.length];
    return [rel.replace(/(\.\w+)$/, `-${i}$1`), text.replaceAll('/about', `/about-${i}`)] as [string, string];
  });
}

describe('the parser pool', () => {
  it('gives every file the links the parsers give inline, in input order, from the calling thread and a worker thread', async () => {
    const files = manyFiles(POOL_BATCH_FILES * 6 + 7);
    const inline = files.map(([rel, text]) => parseLinks(rel, text));
    expect(await parseInWorkers(files, 1)).toEqual(inline);
    // A second run reuses the started thread, which now surely takes batches of its own.
    expect(await parseInWorkers(files, 1)).toEqual(inline);
    expect(inline.flat().some((l) => l.url.includes('/about-'))).toBe(true);
  });

  it('a measure-sized set through extractLinksMany equals parsing each file on its own', async () => {
    const files = manyFiles(POOL_MIN_FILES + 50);
    // One thread whatever the machine's load (the default starts none when every core is busy).
    process.env[PARSE_THREADS_ENV] = '1';
    let many: Awaited<ReturnType<typeof extractLinksMany>>;
    try {
      expect(poolSize()).toBe(1);
      many = await extractLinksMany(files);
    } finally {
      delete process.env[PARSE_THREADS_ENV];
    }
    expect([...many.keys()]).toEqual(files.map(([rel]) => rel));
    for (const [rel, text] of files) expect(many.get(rel)).toEqual(parseLinks(rel, text));
  });

  it('starts threads only from a share of the idle cores that leaves the verifier its own: none on 2 cores', () => {
    const machine = (cores: number, load: number) => {
      vi.spyOn(os, 'availableParallelism').mockReturnValue(cores);
      vi.spyOn(os, 'loadavg').mockReturnValue([load, load, load]);
    };
    try {
      delete process.env[PARSE_THREADS_ENV];
      machine(2, 0);
      expect(poolSize()).toBe(0);
      machine(8, 0);
      expect(poolSize()).toBe(3);
      machine(8, 5);
      expect(poolSize()).toBe(0);
      process.env[PARSE_THREADS_ENV] = '1';
      machine(2, 0);
      expect(poolSize()).toBe(1);
    } finally {
      vi.restoreAllMocks();
      delete process.env[PARSE_THREADS_ENV];
    }
  });
});
