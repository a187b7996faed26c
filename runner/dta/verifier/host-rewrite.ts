import { extractLinks, linksKnown, rememberDerived } from '../adapters/link-updater/links';
import { hostMatcher } from '../adapters/link-updater/measure';
import { escapeRegExp } from './host-bytes';
import type { FoundLink } from '../adapters/link-updater/parsers';

/**
 * The verifier's cheaper "after" for link_updater: when a changed file's new bytes are exactly its
 * HEAD bytes with the host prefix of each targeted link (found by the verifier's own parse of HEAD)
 * swapped for the new host, its links after are known without a second parse: the same links, the
 * same places shifted by the swaps, the swapped URLs with the new host.
 *
 * Why a parse would say the same: both the text taken out and the text put in are
 * `scheme://host[:port]` — letters, digits, `.`, `-`, `:`, `/` — and sit inside a URL the parser
 * found. None of those characters ends or starts anything in the three grammars there: not an
 * HTML attribute value (quotes, `>`, whitespace, `&` do), a srcset candidate (`,`, whitespace), a
 * Markdown destination, autolink or raw-HTML tag (whitespace, `()<>"'`, `\`, `&`), nor a CSS url()
 * or string (quotes, `)`, whitespace, `\`, `/*` needs a `*`); no newline, so no line's block
 * structure moves. Anything else — another byte changed, a swap of other text, a host with other
 * characters, links that overlap — answers null, and the verifier parses the file as before.
 * This only ever replaces a parse the verifier would have made itself from the same bytes; it
 * takes nothing from the adapter but the bytes it compares.
 */

/** What may be swapped: scheme://host[:port] and nothing else (see above). */
const INERT_HOST = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[A-Za-z0-9.:-]*$/;

/** A text with the targeted hosts swapped, and its links after the swap (host-swap shortcut above). */
export interface HostSwap {
  text: string;
  links: FoundLink[];
}

/**
 * The text with the host prefix of each targeted, rewritable link swapped for the new host, and
 * its links after (the same links, shifted, the swapped URLs with the new host); null where a
 * parse could say otherwise (see above).
 */
export function hostSwap(before: string, links: readonly FoundLink[], fromHosts: readonly string[], toHost: string): HostSwap | null {
  const to = toHost.replace(/\/+$/, '');
  if (!INERT_HOST.test(to)) return null;
  const targeted = hostMatcher(fromHosts);
  const out: FoundLink[] = [];
  const parts: string[] = [];
  let copied = 0; // before's offset up to which parts hold the new text
  let shift = 0; // how far the new text's offsets are from before's at this point
  let lastEnd = -1;
  for (const link of links) {
    if (link.start < 0 || link.start < lastEnd) return null; // a link without a place, or overlapping ones: leave it to the parser
    lastEnd = link.end;
    const host = link.rewritable ? targeted(link.url) : null;
    if (host === null) {
      out.push({ ...link, start: link.start + shift, end: link.end + shift });
      continue;
    }
    const taken = before.slice(link.start, link.start + host.length);
    if (!INERT_HOST.test(taken) || taken !== link.url.slice(0, host.length)) return null;
    parts.push(before.slice(copied, link.start), to);
    copied = link.start + host.length;
    const start = link.start + shift;
    shift += to.length - host.length;
    out.push({ start, end: link.end + shift, url: to + link.url.slice(host.length), rewritable: link.rewritable });
  }
  if (parts.length === 0) return { text: before, links: out };
  parts.push(before.slice(copied));
  return { text: parts.join(''), links: out };
}

/**
 * The text with every spelling of an old host prefix (ASCII case-insensitively, left to right)
 * swapped for the new host: a guess at a proposal whose links the verifier's reader gives no
 * place for (Markdown, read by markdown-it), to know its patch part by. Only a text: its links are
 * parsed as any other, since where they were is not known (a host spelled in prose is swapped too,
 * and then the proposal's part differs and is applied by jsdiff, as before).
 */
export function everyHostSwapped(before: string, fromHosts: readonly string[], toHost: string): string {
  const prefixes = fromHosts.map((h) => h.replace(/\/+$/, '')).filter((p) => p !== '');
  if (prefixes.length === 0) return before;
  // Without the u flag, i folds ASCII letters only with each other (as hostMatcher's lowercasing does for ASCII hosts).
  const any = new RegExp(prefixes.map(escapeRegExp).join('|'), 'gi');
  const to = toHost.replace(/\/+$/, '');
  return before.replace(any, () => to);
}

/** The links of `after` when it is exactly `before` with the host swaps; null otherwise (the file is parsed). */
export function linksAfterHostSwap(before: string, links: readonly FoundLink[], fromHosts: readonly string[], toHost: string, after: string): FoundLink[] | null {
  const swapped = hostSwap(before, links, fromHosts, toHost);
  return swapped !== null && swapped.text === after ? swapped.links : null;
}

/**
 * For each changed file the verifier parses: when its new text is its HEAD text with only the host
 * swaps, its links after are put into this process's parse cache, so the after-measure counts them
 * without a parse. HEAD's links come from the verifier's own before-measure (cached by then).
 * Returns how many files were answered so (or were known already: the apply after a dry-run).
 */
export function seedHostSwaps(changed: readonly string[], readBefore: (rel: string) => string | undefined, readAfter: (rel: string) => string | undefined, params: Record<string, unknown>, parsed: (rel: string) => boolean): number {
  const fromHosts = Array.isArray(params.from_hosts) ? params.from_hosts.map(String) : [];
  const toHost = String(params.to_host ?? '');
  let seeded = 0;
  for (const rel of changed) {
    if (!parsed(rel)) continue;
    const before = readBefore(rel);
    const after = readAfter(rel);
    if (before === undefined || after === undefined) continue;
    // Known already: the apply's files are the texts this process checked in the dry-run's proposal.
    if (linksKnown(rel, after)) {
      seeded++;
      continue;
    }
    const links = linksAfterHostSwap(before, extractLinks(rel, before), fromHosts, toHost, after);
    if (links) {
      rememberDerived(rel, after, links);
      seeded++;
    }
  }
  return seeded;
}
