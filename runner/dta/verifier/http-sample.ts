import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { byteCompare } from '../git-state';
import { extractLinks } from '../adapters/link-updater/links';
import { targetedHost } from '../adapters/link-updater/measure';

/** Requests at once: a bounded check, not a crawl. */
export const HTTP_SAMPLE_CONCURRENCY = 4;

/**
 * The optional HTTP check: a seeded sample (same seed, same sample) of the rewritten links in the
 * changed files, each requested once; a status of 400 or more, or no answer, is a failure.
 */
export async function sampleHttp(after: ReadonlyMap<string, string>, changed: string[], toHost: string, size: number, timeoutMs: number, seed: number): Promise<{ sampled: number; failures: string[] }> {
  const urls = new Set<string>();
  for (const rel of changed) for (const l of extractLinks(rel, after.get(rel) ?? '')) if (targetedHost(l.url, [toHost])) urls.add(l.url);
  const all = [...urls].sort(byteCompare);
  const rng = xoroshiro128plus(seed);
  for (let i = all.length - 1; i > 0; i--) {
    const j = uniformInt(rng, 0, i);
    [all[i], all[j]] = [all[j], all[i]];
  }
  const pick = all.slice(0, size);
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < pick.length) {
      const url = pick[next++];
      try {
        const res = await fetch(url, { method: 'GET', redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
        await res.body?.cancel();
        if (res.status >= 400) failures.push(`${url} answered ${res.status}`);
      } catch (err) {
        failures.push(`${url} did not answer (${err instanceof Error ? err.message : String(err)})`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(HTTP_SAMPLE_CONCURRENCY, pick.length) }, worker));
  return { sampled: pick.length, failures: failures.sort(byteCompare) };
}
