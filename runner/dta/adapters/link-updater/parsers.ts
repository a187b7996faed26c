import { parse as micromarkParse, postprocess, preprocess } from 'micromark';
import { decodeString } from 'micromark-util-decode-string';
import type { Token } from 'parse5';
import { SAXParser } from 'parse5-sax-parser';
import * as css from 'css-tree/tokenizer';
import { readHtml, type TagAttr } from './html-htmlparser2';
import { readMarkdown } from './markdown-markdown-it';
import { markdownPlaces } from './markdown-places';

/**
 * Every link of a file with its exact place in the text, through real parsers: parse5 (SAX mode) for HTML,
 * micromark (CommonMark) for Markdown, CSS Syntax's tokenizer (css-tree's) for CSS. The adapter rewrites by these offsets and the
 * verifier counts with them, so a link inside a comment, a code block or a string is never one.
 */

export interface FoundLink {
  /** Offsets of the URL in the file's text ([start, end)). */
  start: number;
  end: number;
  url: string;
  /** false: the parser found a link but its text in the source is not the URL (escapes, entities). */
  rewritable: boolean;
}

export type LinkKind = 'html' | 'markdown' | 'css';

export function kindOf(rel: string): LinkKind | null {
  const ext = rel.slice(rel.lastIndexOf('.') + 1).toLowerCase();
  if (ext === 'html' || ext === 'htm' || ext === 'xhtml') return 'html';
  if (ext === 'md' || ext === 'markdown' || ext === 'mdx') return 'markdown';
  if (ext === 'css') return 'css';
  return null;
}

export function parseLinks(rel: string, text: string): FoundLink[] {
  const kind = kindOf(rel);
  const links = kind === 'html' ? htmlLinks(text, 0) : kind === 'markdown' ? markdownLinks(text) : kind === 'css' ? cssLinks(text, 0) : [];
  return links.sort((a, b) => a.start - b.start);
}

// ── HTML ─────────────────────────────────────────────────────────────────────────────────────────

const URL_ATTRS = new Set(['href', 'src', 'action', 'formaction', 'poster', 'cite', 'data']);

/** What parse5-sax-parser's ParserFeedbackSimulator calls: its SAXParser's token handlers. */
type SaxHandler = Pick<SAXParser, 'onStartTag' | 'onEndTag' | 'onCharacter' | 'onWhitespaceCharacter' | 'onNullCharacter' | 'onComment' | 'onDoctype' | 'onEof'>;
/** The part of a ParserFeedbackSimulator used here: its tokenizer, and whether it is in SVG or MathML. */
interface FeedbackSimulator {
  tokenizer: { write(chunk: string, isLastChunk: boolean): void };
  inForeignContent: boolean;
}
type FeedbackSimulatorClass = new (options: { sourceCodeLocationInfo: boolean }, handler: SaxHandler) => FeedbackSimulator;

/** A SAXParser that tells the class of its simulator (the package does not export it by name). */
class SimulatorOf extends SAXParser {
  simulatorClass(): FeedbackSimulatorClass {
    return (this.parserFeedbackSimulator as object).constructor as FeedbackSimulatorClass;
  }
}
let simulatorClass: FeedbackSimulatorClass | null = null;

/** parse5-sax-parser's ParserFeedbackSimulator (parse5's tokenizer, switched as the tree builder switches it), found once. */
function feedbackSimulator(): FeedbackSimulatorClass {
  simulatorClass ??= new SimulatorOf().simulatorClass();
  return simulatorClass;
}

/**
 * parse5's SAX mode (parse5-sax-parser, from parse5's authors): parse5's own tokenizer, switched
 * into raw text, RCDATA, script data and foreign content exactly as parse5's tree builder switches
 * it (its ParserFeedbackSimulator, which calls the handlers below), with no tree built. Building
 * the tree was two thirds of an HTML file's parse and told us nothing more: every link is an
 * attribute of a start tag, where the tokenizer gives its exact offsets. The handlers are the
 * parser's own token callbacks, overridden: its default merges every run of text into a new
 * location object per character token (a third of the rest), and we need text only after <style>.
 * Run synchronously: the stream API would end on a later tick. Without the stream, too: a
 * SAXParser is a Transform piped into a null stream, made per file (and per raw HTML chunk of a
 * Markdown file) for nothing; this handler is driven by the SAXParser's own feedback simulator and
 * tokenizer, made per text (bench:dta's 1,667 pages: median 70–84 → 58–60 ms CPU).
 */
class LinkSax implements SaxHandler {
  private readonly out: FoundLink[] = [];
  private readonly simulator: FeedbackSimulator;
  /** A <style> just opened: its first child, if text, is its CSS (as the tree had it). */
  private styleOpen = false;
  private cssFrom = -1;
  private cssTo = -1;

  constructor(
    private readonly text: string,
    private readonly base: number,
  ) {
    this.simulator = new (feedbackSimulator())({ sourceCodeLocationInfo: true }, this);
  }

  /** The whole text, tokenized now (the last chunk: the tokenizer flushes what it holds). */
  links(): FoundLink[] {
    this.simulator.tokenizer.write(this.text, true);
    return this.out;
  }

  onStartTag(token: Token.TagToken): void {
    this.endText();
    const loc = token.location?.attrs;
    const attrs = token.attrs.map((a) => ({ name: a.name, value: a.value, start: loc?.[a.name]?.startOffset ?? -1, end: loc?.[a.name]?.endOffset ?? -1 }));
    element(token.tagName, attrs, this.text, this.base, this.out);
    // A self-closing <style/> is closed in SVG or MathML only; in HTML the flag is ignored.
    this.styleOpen = token.tagName === 'style' && !(token.selfClosing && this.simulator.inForeignContent);
  }

  onCharacter(token: Token.CharacterToken): void {
    if (!this.styleOpen || !token.location) return;
    if (this.cssFrom < 0) this.cssFrom = token.location.startOffset;
    this.cssTo = token.location.endOffset;
  }

  onWhitespaceCharacter(token: Token.CharacterToken): void {
    this.onCharacter(token);
  }

  onNullCharacter(token: Token.CharacterToken): void {
    this.onCharacter(token);
  }

  onEndTag(): void {
    this.endText();
  }

  onComment(): void {
    this.endText();
  }

  onDoctype(): void {
    this.endText();
  }

  onEof(): void {
    this.endText();
  }

  /** Any other token ends the text right after a <style> (its first child). */
  private endText(): void {
    if (this.cssFrom >= 0) this.out.push(...cssLinks(this.text.slice(this.cssFrom, this.cssTo), this.base + this.cssFrom));
    this.styleOpen = false;
    this.cssFrom = this.cssTo = -1;
  }
}

/**
 * Which parsers this process reads with. The adapter's (the default): parse5 in SAX mode for HTML,
 * micromark for Markdown — both with exact offsets, which a rewrite needs. The verifier's
 * (verifier/main.ts): htmlparser2 and markdown-it, parsers written apart from those, so its count
 * is a second reading of the bytes and not the adapter's parsers run again — and cheaper. Both
 * feed the same link rules (element(), cssLinks(); CSS is the same tokenizer for both). html-readers.test.ts
 * and markdown-readers.test.ts hold the two readings to the same answers.
 */
export type Readers = 'adapter' | 'verifier';
let readers: Readers = 'adapter';
export function useReaders(r: Readers): void {
  readers = r;
}
export function currentReaders(): Readers {
  return readers;
}

function htmlLinks(text: string, base: number): FoundLink[] {
  if (readers === 'adapter') return new LinkSax(text, base).links();
  const out: FoundLink[] = [];
  readHtml(text, {
    startTag: (tagName, attrs) => element(tagName, attrs, text, base, out),
    styleText: (start, end) => out.push(...cssLinks(text.slice(start, end), base + start)),
  });
  return out;
}

/** An attribute with its decoded value and the [start, end) of `name=value` in the source (start < 0: unknown). */
type Attr = TagAttr;

function element(tagName: string, attrs: readonly Attr[], text: string, base: number, out: FoundLink[]): void {
  for (const attr of attrs) {
    if (attr.start < 0) continue;
    const value = attrValue(text, attr.start, attr.end);
    if (!value) continue;
    const name = attr.name.toLowerCase();
    if (URL_ATTRS.has(name)) push(out, base + value.start, value.raw.trim(), value.raw, attr.value.trim());
    else if (name === 'srcset' || name === 'imagesrcset') {
      for (const c of srcsetCandidates(value.raw)) push(out, base + value.start + c.offset, c.url, c.url, c.url);
    } else if (name === 'content' && tagName === 'meta' && attrs.some((a) => a.name === 'http-equiv' && a.value.toLowerCase() === 'refresh')) {
      const m = /url\s*=\s*['"]?([^'"\s;]+)/i.exec(value.raw);
      if (m) push(out, base + value.start + m.index + m[0].length - m[1].length, m[1], m[1], m[1]);
    } else if (name === 'style') {
      out.push(...cssLinks(value.raw, base + value.start));
    }
  }
}

/** The raw value of `name="value"` in the source and where it starts. */
function attrValue(text: string, start: number, end: number): { raw: string; start: number } | null {
  const src = text.slice(start, end);
  const eq = src.indexOf('=');
  if (eq < 0) return null;
  let i = eq + 1;
  while (i < src.length && /\s/.test(src[i])) i++;
  const q = src[i];
  if (q === '"' || q === "'") return { raw: src.slice(i + 1, src.lastIndexOf(q) > i ? src.lastIndexOf(q) : src.length), start: start + i + 1 };
  return { raw: src.slice(i), start: start + i };
}

/** "a.png 1x, http://x/b.png 2x" → each URL and its offset in the value. */
function srcsetCandidates(raw: string): Array<{ url: string; offset: number }> {
  const out: Array<{ url: string; offset: number }> = [];
  const re = /\s*([^\s,]+)(?:\s+[^,]*)?(?:,|$)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(raw)) && m[0].length > 0) out.push({ url: m[1], offset: m.index + m[0].indexOf(m[1]) });
  return out;
}

function push(out: FoundLink[], start: number, url: string, raw: string, parsed: string): void {
  if (!url) return;
  // Leading spaces inside the quotes: the URL starts after them.
  const lead = raw.length - raw.trimStart().length;
  out.push({ start: start + lead, end: start + lead + url.length, url, rewritable: url === parsed || escapesOnlyAfterHost(url, parsed) });
}

/**
 * An attribute written with character references (`?a=1&amp;b=2`) whose scheme and host are
 * written plainly: a host rewrite touches only the part before the first `&`, so the rest stays
 * as written and the link can still be moved. A host written with references is left alone.
 */
function escapesOnlyAfterHost(raw: string, parsed: string): boolean {
  const amp = raw.indexOf('&');
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(raw);
  if (amp < 0 || !scheme) return false;
  const slash = raw.slice(scheme[0].length).search(/[/?#]/);
  const hostEnd = slash < 0 ? raw.length : scheme[0].length + slash;
  return amp > hostEnd && raw.slice(0, amp) === parsed.slice(0, amp);
}

// ── CSS ──────────────────────────────────────────────────────────────────────────────────────────

/**
 * CSS links as CSS Syntax Level 3 tokenizes them (css-tree's tokenizer, one pass, no tree): a
 * `<url-token>` (`url(…)` unquoted), a `url(` function whose argument is a string, and the string
 * of an `@import`. Comments and strings are tokens of their own, so a `url(` inside one is none.
 * This is what a browser reads as a URL, wherever it is: in a declaration, an `@import`, an
 * at-rule's prelude (`@namespace`, `@supports`), and in CSS that has an error elsewhere (a browser
 * recovers, and so does the tokenizer). The URL is as written (escapes are not decoded), so a
 * rewrite by its offsets changes only those characters. postcss's tree (the reading before) cost
 * four to six times as much on bench:dta's site and found the same links in valid declarations and
 * imports (parsers.test.ts).
 */
const URL_OPEN = 'url('.length;

function cssLinks(text: string, base: number): FoundLink[] {
  const out: FoundLink[] = [];
  // A link is a `url(` or an `@import` (any case): text that spells neither has none, untokenized.
  if (!/url\(|@import/i.test(text)) return out;
  const push = (start: number, end: number) => out.push({ start: base + start, end: base + end, url: text.slice(start, end), rewritable: true });
  /** What the last tokens opened that a string may complete: `url(` or `@import` (whitespace and comments between). */
  let awaiting: 'url' | 'import' | null = null;
  css.tokenize(text, (type, start, end) => {
    // CSS Syntax drops comments before parsing: `@import /* c */ "x"` imports x.
    if (type === css.WhiteSpace || type === css.Comment) return;
    if (type === css.String && awaiting) {
      const quote = text.charCodeAt(start);
      // A string closed by its quote (not one cut by the end of the text): its content.
      const closed = end - start >= 2 && text.charCodeAt(end - 1) === quote && !escaped(text, end - 1, start + 1);
      push(start + 1, closed ? end - 1 : end);
    } else if (type === css.Url) {
      // `url(` + whitespace + the URL + whitespace + `)` (absent at the end of the text).
      let from = start + URL_OPEN;
      while (from < end && isCssSpace(text.charCodeAt(from))) from++;
      let to = end;
      if (to > from && text.charCodeAt(to - 1) === 0x29 /* ) */ && !escaped(text, to - 1, from)) to--;
      while (to > from && isCssSpace(text.charCodeAt(to - 1))) to--;
      if (to > from) push(from, to);
    }
    awaiting = type === css.Function && end - start === URL_OPEN && text.slice(start, end).toLowerCase() === 'url(' ? 'url' : type === css.AtKeyword && text.slice(start, end).toLowerCase() === '@import' ? 'import' : null;
  });
  return out;
}

/** CSS Syntax's whitespace: space, tab, and the newlines (LF, CR, FF). */
function isCssSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d || code === 0x0c;
}

/** Whether the character at `at` is escaped: an odd run of backslashes before it, not before `from`. */
function escaped(text: string, at: number, from: number): boolean {
  let n = 0;
  for (let i = at - 1; i >= from && text.charCodeAt(i) === 0x5c; i--) n++;
  return n % 2 === 1;
}

// ── Markdown ─────────────────────────────────────────────────────────────────────────────────────

/**
 * Links of a Markdown file from micromark's token stream (the CommonMark parser under mdast),
 * without building the syntax tree: the tree cost twice the tokenizing and told us less — a
 * destination token carries its exact offsets, where a tree node only has the decoded URL to
 * search for again in the source (which found it in an image's alt text or a title). Counted as
 * mdast counts: inline links and images, definitions, autolinks, and links inside raw HTML.
 */
let mdContext: ReturnType<typeof micromarkParse> | null = null;

/**
 * One micromark parse context for every Markdown file of the process: making one combines the
 * construct tables (micromark-util-combine-extensions), ~7 % of a bench Markdown file's parse. Its
 * only per-document state is `defined` (the reference definitions) and `lazy` (the lazy lines),
 * both fields of micromark's ParseContext type, read through the context when used: reset before
 * each document, so nothing of one file reaches the next (parsers.test.ts).
 */
function markdownContext(): ReturnType<typeof micromarkParse> {
  mdContext ??= micromarkParse();
  mdContext.defined = [];
  mdContext.lazy = {};
  return mdContext;
}

/** Links without a place (start/end -1: markdown-it gives none), counted but never rewritten from. */
function placeless(url: string): FoundLink {
  return { start: -1, end: -1, url, rewritable: false };
}

/** A destination or a URL autolink at [start, end) of the source, as micromark's token has it. */
function destinationLink(out: FoundLink[], text: string, start: number, end: number, autolink: boolean): void {
  const raw = text.slice(start, end);
  if (autolink) {
    out.push({ start, end, url: raw, rewritable: true });
    return;
  }
  // Escapes and character references mean the source is not the URL: counted, not rewritten.
  const url = decodeString(raw);
  if (url) out.push({ start, end, url, rewritable: url === raw });
}

function markdownLinks(text: string): FoundLink[] {
  const out: FoundLink[] = [];
  if (readers === 'verifier') {
    readMarkdown(text, { url: (url) => out.push(placeless(url)), html: (source) => out.push(...htmlLinks(source, 0).map((l) => placeless(l.url))) });
    return out;
  }
  const places = markdownPlaces(text);
  if (places) {
    for (const p of places) {
      if (p.kind === 'html') out.push(...htmlLinks(text.slice(p.start, p.end), p.start));
      else if (p.kind === 'email') out.push({ start: p.start, end: p.start, url: `mailto:${text.slice(p.start, p.end)}`, rewritable: false });
      else destinationLink(out, text, p.start, p.end, p.kind === 'autolink');
    }
    return out;
  }
  return micromarkLinks(text);
}

/**
 * The links by micromark's token stream: the reading markdown-places.ts is held to, and what a
 * document it cannot place is read with.
 */
export function micromarkLinks(text: string): FoundLink[] {
  const out: FoundLink[] = [];
  const events = postprocess(markdownContext().document().write(preprocess()(text, undefined, true)));
  for (const [kind, token] of events) {
    if (kind !== 'enter') continue;
    const start = token.start.offset;
    const end = token.end.offset;
    switch (token.type) {
      case 'resourceDestinationString':
      case 'definitionDestinationString':
        destinationLink(out, text, start, end, false);
        break;
      case 'autolinkProtocol':
        destinationLink(out, text, start, end, true);
        break;
      case 'autolinkEmail':
        out.push({ start, end: start, url: `mailto:${text.slice(start, end)}`, rewritable: false });
        break;
      case 'htmlFlow':
      case 'htmlText':
        out.push(...htmlLinks(text.slice(start, end), start));
        break;
      default:
        break;
    }
  }
  return out;
}
