import type MarkdownIt from 'markdown-it';
import type StateBlock from 'markdown-it/lib/rules_block/state_block.mjs';
import type StateCore from 'markdown-it/lib/rules_core/state_core.mjs';
import type StateInline from 'markdown-it/lib/rules_inline/state_inline.mjs';
import type Token from 'markdown-it/lib/token.mjs';
import { linkReadingMarkdownIt, ruleOf } from './markdown-markdown-it';

/**
 * The adapter's fast Markdown reading: markdown-it's token stream, with the exact source offsets
 * of what micromark's tokens give (parsers.ts): inline links' and images' destinations, reference
 * definitions' destinations, autolinks, raw HTML. markdown-it is a CommonMark parser 5–10× cheaper
 * than micromark on the bench's pages, but it keeps only line ranges; the offsets are taken where
 * markdown-it itself finds them:
 *   - a destination is where its own `parseLinkDestination` was called from the link, image or
 *     definition rule (wrapped below), in the coordinates of the text that rule read;
 *   - a definition reads the source itself, so its offsets are the source's;
 *   - an inline rule reads a block's content (container markers, indentation and the outer
 *     whitespace taken away, line by line): each content line is matched back to its source line
 *     and checked byte for byte, so an offset is mapped only through text proven equal;
 *   - an image's alt text is parsed as its own string: its offsets go through the image's.
 * Anything this cannot place exactly — CR line endings, NUL, a byte-order mark, a content line
 * that does not match its source line, a parser exception — answers null, and the caller parses the
 * document with micromark as before. markdown-places.test.ts holds the two readings to identical
 * links (offsets, URLs, rewritability) on the fixtures, generated pages and CommonMark's own
 * examples.
 */

/** What micromark's token would have been, in source offsets: the caller turns each into links as before. */
export type MarkdownPlace = { kind: 'destination'; start: number; end: number } | { kind: 'autolink'; start: number; end: number } | { kind: 'email'; start: number; end: number } | { kind: 'html'; start: number; end: number };

/** Maps an offset in an inline parser's text to the source's, -1 where it is not proven. */
type OffsetMap = (j: number) => number;

/** The document being read: its places, and whether anything could not be placed. */
interface Reading {
  places: MarkdownPlace[];
  failed: boolean;
  text: string;
  lineStarts: number[];
}
let reading: Reading | null = null;

/** The rule invocations under way (innermost last): each learns its own destination call. */
const frames: Array<{ dest: { start: number; end: number; ok: boolean } | null }> = [];
/** Each inline parser state's offset map (the block's content, or an image's alt text). */
const maps = new WeakMap<StateInline, OffsetMap>();
/** The map for the next inline parse, set just before it by the core rule or an image. */
let pendingMap: OffsetMap | null = null;

const UNKNOWN: OffsetMap = () => -1;

/** A place in an inline parser's text, mapped to the source; an unmappable one fails the reading. */
function placeInline(state: StateInline, kind: MarkdownPlace['kind'], start: number, end: number, contiguous: boolean): void {
  if (!reading) return;
  const map = maps.get(state) ?? UNKNOWN;
  const s = map(start);
  const last = end > start ? map(end - 1) : s - 1;
  if (s < 0 || last < s - 1 || (contiguous && last + 1 - s !== end - start)) {
    reading.failed = true;
    return;
  }
  reading.places.push({ kind, start: s, end: last + 1 } as MarkdownPlace);
}

function lineText(r: Reading, line: number): { start: number; text: string } {
  const start = r.lineStarts[line];
  if (start === undefined) return { start: -1, text: '' };
  const next = r.lineStarts[line + 1];
  const end = next === undefined ? r.text.length : next - 1;
  return { start, text: r.text.slice(start, end) };
}

/** markdown-it's asciiTrim set: space, tab, LF, CR. */
const ASCII_TRAILING = /[ \t\n\r]+$/;
const LEADING_BLANKS = /^[ \t]+/;

/**
 * An inline token's content mapped to the source, line by line. A content line is its source
 * line's tail (markdown-it's getLines takes each line from past the container markers and
 * indentation), the last one trimmed at its end; an ATX heading's is its line between the `#`s
 * and the closing sequence. Leading blanks of a content line may be spaces markdown-it made from a
 * tab: they are left unmapped (no place starts on a blank). Every line is checked against the
 * source; a mismatch maps nothing.
 */
function contentMap(r: Reading, tok: Token, atx: boolean): OffsetMap {
  if (!tok.map) return UNKNOWN;
  const [l0, l1] = tok.map;
  const pieces = tok.content.split('\n');
  const segments: Array<{ from: number; to: number; src: number }> = [];
  let offset = 0;
  if (atx) {
    const { start, text } = lineText(r, l0);
    const hashes = /#+/.exec(text);
    if (pieces.length !== 1 || !hashes) return UNKNOWN;
    let at = hashes.index + hashes[0].length;
    while (at < text.length && (text[at] === ' ' || text[at] === '\t')) at++;
    if (!text.startsWith(tok.content, at)) return UNKNOWN;
    segments.push({ from: 0, to: tok.content.length, src: start + at });
  } else {
    // A setext heading's map includes its underline; a paragraph's is its lines.
    if (pieces.length !== l1 - l0 && pieces.length !== l1 - l0 - 1) return UNKNOWN;
    for (let k = 0; k < pieces.length; k++) {
      const piece = pieces[k]!;
      const { start, text } = lineText(r, l0 + k);
      const tail = k === pieces.length - 1 ? text.replace(ASCII_TRAILING, '') : text;
      const blanks = LEADING_BLANKS.exec(piece)?.[0].length ?? 0;
      const exact = piece.slice(blanks);
      if (start < 0 || !tail.endsWith(exact)) return UNKNOWN;
      segments.push({ from: offset + blanks, to: offset + piece.length, src: start + tail.length - exact.length });
      offset += piece.length + 1;
    }
  }
  return (j) => {
    for (const seg of segments) if (j >= seg.from && j < seg.to) return seg.src + (j - seg.from);
    return -1;
  };
}

function make(): MarkdownIt {
  const md = linkReadingMarkdownIt();

  // Each instance has its own helpers object: this wrap reaches this reader's rules only.
  const parseLinkDestination = md.helpers.parseLinkDestination;
  md.helpers.parseLinkDestination = (str: string, pos: number, max: number) => {
    const res = parseLinkDestination(str, pos, max);
    const frame = frames[frames.length - 1];
    if (frame) frame.dest = { start: pos, end: res.pos, ok: res.ok };
    return res;
  };

  // Inline links and images: the destination of the inline form (the rule ended at its `)`); a
  // reference form's destination is its definition's, placed where it is defined.
  for (const name of ['link', 'image'] as const) {
    const rule = ruleOf<(state: StateInline, silent: boolean) => boolean>(md.inline.ruler, name);
    md.inline.ruler.at(name, (state: StateInline, silent: boolean) => {
      const frame: (typeof frames)[number] = { dest: null };
      frames.push(frame);
      // Rules run silently inside an image's label scan: each leaves the pending map as it found it.
      const pending = pendingMap;
      if (name === 'image' && !silent) {
        // The image's alt text is parsed as a string of its own, from just past `![`.
        const labelStart = state.pos + 2;
        const outer = maps.get(state) ?? UNKNOWN;
        pendingMap = (j) => outer(labelStart + j);
      }
      let ok: boolean;
      try {
        ok = rule(state, silent);
      } finally {
        frames.pop();
        pendingMap = pending;
      }
      const dest = frame.dest;
      if (ok && !silent && state.src.charCodeAt(state.pos - 1) === 0x29 /* ) */ && dest?.ok) {
        // `<…>`: micromark's destination string is inside the brackets.
        const angle = state.src.charCodeAt(dest.start) === 0x3c /* < */;
        const start = dest.start + (angle ? 1 : 0);
        const end = dest.end - (angle ? 1 : 0);
        if (end > start) placeInline(state, 'destination', start, end, true);
      }
      return ok;
    });
  }

  const autolink = ruleOf<(state: StateInline, silent: boolean) => boolean>(md.inline.ruler, 'autolink');
  md.inline.ruler.at('autolink', (state: StateInline, silent: boolean) => {
    const start = state.pos;
    const from = state.tokens.length;
    const ok = autolink(state, silent);
    if (ok && !silent) {
      const inner = state.src.slice(start + 1, state.pos - 1);
      // With normalizeLink as the identity, a URL autolink's href is its text; an email's is mailto: + it.
      // (Pending text is pushed as a token of its own first: the link is the first link_open after `from`.)
      const href = state.tokens.slice(from).find((t) => t.type === 'link_open')?.attrGet('href');
      placeInline(state, href === inner ? 'autolink' : 'email', start + 1, state.pos - 1, true);
    }
    return ok;
  });

  const htmlInline = ruleOf<(state: StateInline, silent: boolean) => boolean>(md.inline.ruler, 'html_inline');
  md.inline.ruler.at('html_inline', (state: StateInline, silent: boolean) => {
    const start = state.pos;
    const ok = htmlInline(state, silent);
    // A tag may span lines: its source is everything between its mapped ends, as micromark's token.
    if (ok && !silent) placeInline(state, 'html', start, state.pos, false);
    return ok;
  });

  // Definitions read the source itself (this markdown-it scans it directly): their offsets are the source's.
  const reference = ruleOf<(state: StateBlock, start: number, end: number, silent: boolean) => boolean>(md.block.ruler, 'reference');
  md.block.ruler.at(
    'reference',
    (state: StateBlock, startLine: number, endLine: number, silent: boolean) => {
      const frame: (typeof frames)[number] = { dest: null };
      frames.push(frame);
      let ok: boolean;
      try {
        ok = reference(state, startLine, endLine, silent);
      } finally {
        frames.pop();
      }
      const dest = frame.dest;
      if (ok && !silent && dest?.ok && reading) {
        const angle = state.src.charCodeAt(dest.start) === 0x3c;
        const start = dest.start + (angle ? 1 : 0);
        const end = dest.end - (angle ? 1 : 0);
        if (end > start) reading.places.push({ kind: 'destination', start, end });
      }
      return ok;
    },
  );

  // The inline parse of each block, with its content's map (replaces markdown-it's core rule, which only loops).
  md.core.ruler.at('inline', (state: StateCore) => {
    const tokens = state.tokens;
    for (let i = 0; i < tokens.length; i++) {
      const tok = tokens[i]!;
      if (tok.type !== 'inline') continue;
      const prev = tokens[i - 1];
      pendingMap = reading ? contentMap(reading, tok, prev?.type === 'heading_open' && prev.markup.startsWith('#')) : UNKNOWN;
      state.md.inline.parse(tok.content, state.md, state.env, tok.children ?? (tok.children = []));
    }
  });
  // markdown-it's own parse, which makes the state itself: here it also gets its map.
  const inline = md.inline;
  inline.parse = (str: string, mdi: MarkdownIt, env: unknown, out: Token[]) => {
    const state = new inline.State(str, mdi, env, out);
    maps.set(state, pendingMap ?? UNKNOWN);
    pendingMap = null;
    inline.tokenize(state);
    for (const rule of inline.ruler2.getRules('')) rule(state);
  };
  return md;
}

let md: MarkdownIt | null = null;

/** Characters whose handling would make markdown-it's text differ from the source, or its offsets unsure. */
const UNPLACEABLE = /[\r\0\ufeff]/;

/**
 * Where micromark's link tokens would be, in source order; null when the offsets cannot all be
 * proven (the caller then parses with micromark).
 */
export function markdownPlaces(text: string): MarkdownPlace[] | null {
  if (UNPLACEABLE.test(text)) return null;
  md ??= make();
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const r: Reading = { places: [], failed: false, text, lineStarts };
  reading = r;
  try {
    const tokens = md.parse(text, {});
    for (const tok of tokens) {
      if (tok.type !== 'html_block' || !tok.map) continue;
      // micromark's HTML (flow) token: from the first byte of the block to the end of its last line.
      const first = tok.content.split('\n', 1)[0]!.replace(LEADING_BLANKS, '');
      const line = lineText(r, tok.map[0]);
      const last = lineText(r, tok.map[1] - 1);
      if (line.start < 0 || last.start < 0 || !line.text.endsWith(first)) return null;
      r.places.push({ kind: 'html', start: line.start + line.text.length - first.length, end: last.start + last.text.length });
    }
  } catch {
    return null;
  } finally {
    reading = null;
    frames.length = 0;
    pendingMap = null;
  }
  return r.failed ? null : r.places.sort((a, b) => a.start - b.start);
}
