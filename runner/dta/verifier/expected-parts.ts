import { extractLinks, rememberDerived } from '../adapters/link-updater/links';
import { filePatch, type KnownPart } from '../patch';
import { everyHostSwapped, hostSwap } from './host-rewrite';

/**
 * The verifier's own expectation of link_updater's proposal, made from its own parse of HEAD while
 * the adapter is still proposing: for each file it parsed, HEAD's text with the targeted hosts
 * swapped at the places its parsers found (host-rewrite.ts), and that file's part of a patch as
 * patch.ts writes it. When the proposal comes, a part of its patch that is byte for byte one of
 * these makes exactly that text (the verifier's own), so the part is not parsed and applied again,
 * and the new text's links are already known; any other part is applied and parsed as before.
 * Nothing here is the adapter's: an adapter that rewrites otherwise only finds its parts checked
 * the slower way, and the counts decide as they always did.
 */

/** Files between two looks at whether the proposal came: a few ms of work on bench:dta's pages. */
export const EXPECT_BATCH_FILES = 200;

/**
 * Adds each file's expected part to `parts`, a batch at a time, and stops when `stopped()` says the
 * proposal came: the expectation only ever uses time the verifier would spend waiting, and what it
 * did not reach is checked as before.
 */
export async function expectParts(files: Iterable<readonly [string, string]>, params: Record<string, unknown>, parts: Map<string, KnownPart>, stopped: () => boolean): Promise<void> {
  const fromHosts = Array.isArray(params.from_hosts) ? params.from_hosts.map(String) : [];
  const toHost = String(params.to_host ?? '');
  // Texts expected without their links (see below), parsed once every part is made.
  const unparsed: Array<[string, string]> = [];
  let n = 0;
  const pause = async () => {
    if (++n % EXPECT_BATCH_FILES !== 0) return false;
    await new Promise((resolve) => setImmediate(resolve));
    return stopped();
  };
  for (const [rel, before] of files) {
    if (await pause()) return;
    const links = extractLinks(rel, before);
    const swapped = hostSwap(before, links, fromHosts, toHost);
    if (swapped === null) {
      // Links without a place (Markdown: markdown-it gives none): the text only; its links are
      // not derived from a guess but parsed by this process's own reader, in the time left.
      const after = links.some((l) => l.start < 0) ? everyHostSwapped(before, fromHosts, toHost) : before;
      if (after === before) continue;
      parts.set(filePatch(rel, before, after), { rel, after });
      unparsed.push([rel, after]);
      continue;
    }
    if (swapped.text === before) continue;
    rememberDerived(rel, swapped.text, swapped.links);
    parts.set(filePatch(rel, before, swapped.text), { rel, after: swapped.text });
  }
  // A real parse of each such text (kept in this process's cache by the text): where the proposal
  // is that text, its check finds the links known; where it is not, the parse was only idle time.
  for (const [rel, after] of unparsed) {
    if (await pause()) return;
    extractLinks(rel, after);
  }
}
