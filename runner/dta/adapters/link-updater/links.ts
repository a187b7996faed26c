import { parseInWorkers, POOL_MIN_FILES, poolSize } from './parse-pool';
import { kindOf, parseLinks, type FoundLink } from './parsers';

export { kindOf, type FoundLink, type LinkKind } from './parsers';

/**
 * Parsing is the cost of a run; within one process the same text (measure, then propose) is
 * parsed once. Bounded so a huge tree does not keep every file's links.
 */
const CACHE_MAX = 20_000;
/**
 * By kind, then by the text itself: a key made of kind + text was a new string per lookup, copied
 * and hashed whole each time (~0.1 s CPU per 5,000-file run); a text string keeps its hash.
 */
const cache = new Map<string | null, Map<string, FoundLink[]>>();
let cached = 0;

/**
 * A second level behind the in-process cache, by content (the verifier's memo across its runs):
 * asked for a text's links on a miss here, and given what a parser found.
 */
export interface LinkStore {
  get(kind: string, text: string): FoundLink[] | undefined;
  set(kind: string, text: string, links: FoundLink[]): void;
}
let store: LinkStore | null = null;

/** The verifier process sets its own memo here; nothing else does. */
export function useLinkStore(s: LinkStore | null): void {
  store = s;
}

/** The text's links if this process or the store knows them (a store's answer is cached here too). */
function remembered(kind: string | null, text: string): FoundLink[] | undefined {
  const hit = cache.get(kind)?.get(text);
  if (hit || !store || !kind) return hit;
  const kept = store.get(kind, text);
  if (kept) remember(kind, text, kept, false);
  return kept;
}

/** Keeps a text's links in this process's cache and, when a parser found them (`parsed`), in the store. */
function remember(kind: string | null, text: string, links: FoundLink[], parsed: boolean): void {
  if (parsed && store && kind) store.set(kind, text, links);
  if (cached >= CACHE_MAX) {
    cache.clear();
    cached = 0;
  }
  let byText = cache.get(kind);
  if (!byText) cache.set(kind, (byText = new Map()));
  if (!byText.has(text)) cached++;
  byText.set(text, links);
}

/**
 * Links known without parsing this text (the verifier's host swap: verifier/host-rewrite.ts). Kept
 * in this process's cache only, never in the store, which holds only what a parser said.
 */
export function rememberDerived(rel: string, text: string, links: FoundLink[]): void {
  remember(kindOf(rel), text, links, false);
}

/** Whether this process knows the text's links already (parsed or derived here; the store is not asked). */
export function linksKnown(rel: string, text: string): boolean {
  return cache.get(kindOf(rel))?.has(text) ?? false;
}

export function extractLinks(rel: string, text: string): FoundLink[] {
  const kind = kindOf(rel);
  const known = remembered(kind, text);
  if (known) return known;
  const links = parseLinks(rel, text);
  remember(kind, text, links, true);
  return links;
}

/**
 * The links of many files at once (a run's measure): what is not cached or memoised is parsed in
 * the worker pool when there is enough of it, inline otherwise. A pool that fails (a thread
 * crashed) costs time, never a result: the same parsers run inline.
 */
export async function extractLinksMany(files: Iterable<readonly [string, string]>): Promise<Map<string, FoundLink[]>> {
  const out = new Map<string, FoundLink[]>();
  const missing: Array<[string, string]> = [];
  for (const [rel, text] of files) {
    const known = remembered(kindOf(rel), text);
    if (known) out.set(rel, known);
    else missing.push([rel, text]);
  }
  let parsed: FoundLink[][] | null = null;
  if (missing.length >= POOL_MIN_FILES && poolSize() > 0) {
    try {
      parsed = await parseInWorkers(missing);
    } catch {
      parsed = null;
    }
  }
  parsed ??= missing.map(([rel, text]) => parseLinks(rel, text));
  missing.forEach(([rel, text], i) => {
    remember(kindOf(rel), text, parsed[i], true);
    out.set(rel, parsed[i]);
  });
  return out;
}
