import { Parser, type QuoteType } from 'htmlparser2';

/**
 * HTML start tags and <style> texts read with htmlparser2 — the verifier's HTML reader, a parser
 * written apart from parse5 (the adapter's), so the verifier's count is a second reading of the
 * bytes and not the adapter's parser run again; and about ten times cheaper than parse5's
 * tokenizer, which keeps a line and column for every character. The link rules themselves stay in
 * parsers.ts, shared: this only says where each start tag's attributes and each <style>'s text
 * are. html-readers.test.ts holds both readers to the same answers.
 */

export interface TagAttr {
  name: string;
  /** Decoded value (character references resolved). */
  value: string;
  /** [start, end) of `name=value` in the source, the closing quote included. */
  start: number;
  end: number;
}

export interface HtmlEvents {
  startTag(tagName: string, attrs: TagAttr[]): void;
  /** The text that is a <style>'s first child, as [start, end) in the source. */
  styleText(start: number, end: number): void;
}

/** What HTML's input stream changes in a value: CR (LF after it), NUL. */
const INPUT_STREAM_CHANGES = /[\r\0]/;

/** The attributes of a tag that has none, shared (read only: startTag's consumers never write to it). */
const NO_ATTRS: TagAttr[] = Object.freeze([]) as unknown as TagAttr[];

class Reader extends Parser {
  private nameStart = -1;
  private attrEnd = -1;
  /** The start tag's attributes so far: NO_ATTRS until it has one (most tags have none). */
  private attrs: TagAttr[] = NO_ATTRS;
  private styleOpen = false;
  private textFrom = -1;
  private textTo = -1;
  /** Whether the start tag being read reached onopentag (htmlparser2 drops a <form> inside a <form>, as the tree does). */
  private opened = false;
  /** Where the first <noscript> in HTML content after `from` ends its start tag (see readHtml). */
  noscriptAt = -1;

  constructor(
    private readonly events: HtmlEvents,
    private readonly from: number,
  ) {
    super({
      onattribute: (name, value) => {
        // parse5 keeps the first of duplicated attributes, and so do we (a tag has a few: a
        // search of them costs less than a Set per tag).
        if (this.attrs.some((a) => a.name === name)) return;
        if (this.attrs === NO_ATTRS) this.attrs = [];
        // As HTML's input stream (and parse5) has them: CR LF and CR as LF, NUL as U+FFFD.
        this.attrs.push({ name, value: INPUT_STREAM_CHANGES.test(value) ? value.replace(/\r\n?/g, '\n').replace(/\0/g, '\uFFFD') : value, start: this.nameStart, end: this.attrEnd });
      },
      onopentag: (name, _attribs, implied) => {
        if (name === 'noscript' && this.noscriptAt < 0 && this.endIndex >= this.from && !this.isInForeignContext()) this.noscriptAt = this.endIndex + 1;
        if (!implied) this.opened = true;
        const attrs = implied ? NO_ATTRS : this.attrs;
        this.attrs = NO_ATTRS;
        this.events.startTag(name, attrs);
        this.styleOpen = name === 'style';
      },
    });
  }

  override onopentagname(start: number, endIndex: number): void {
    this.endText();
    this.attrs = NO_ATTRS;
    super.onopentagname(start, endIndex);
  }

  override onopentagend(endIndex: number): void {
    this.opened = false;
    super.onopentagend(endIndex);
    this.dropped();
  }

  /**
   * A start tag htmlparser2 dropped (a second <form> while one is open: it says so in its source)
   * still has its links in the bytes, and the adapter's parse5 SAX reading counts them (it builds
   * no tree to drop them from): so are they here.
   */
  private dropped(): void {
    if (this.opened || this.attrs.length === 0) return;
    this.events.startTag('form', this.attrs);
    this.attrs = NO_ATTRS;
  }

  override onattribname(start: number, endIndex: number): void {
    this.nameStart = start;
    super.onattribname(start, endIndex);
  }

  override onattribend(quote: QuoteType, endIndex: number): void {
    this.attrEnd = endIndex;
    super.onattribend(quote, endIndex);
  }

  override ontext(start: number, endIndex: number): void {
    if (this.styleOpen) {
      if (this.textFrom < 0) this.textFrom = start;
      this.textTo = endIndex;
    }
    super.ontext(start, endIndex);
  }

  override ontextentity(cp: number, endIndex: number): void {
    if (this.styleOpen && this.textFrom >= 0) this.textTo = endIndex;
    super.ontextentity(cp, endIndex);
  }

  override onclosetag(start: number, endIndex: number): void {
    this.endText();
    super.onclosetag(start, endIndex);
  }

  /** `<x/>` closes x in SVG and MathML only (in HTML the flag is ignored, as parse5 ignores it). */
  override onselfclosingtag(endIndex: number): void {
    const closes = this.isInForeignContext();
    this.opened = false;
    super.onselfclosingtag(endIndex);
    this.dropped();
    if (closes) this.endText();
  }

  override oncomment(start: number, endIndex: number, offset: number): void {
    this.endText();
    super.oncomment(start, endIndex, offset);
  }

  override oncdata(start: number, endIndex: number, offset: number): void {
    this.endText();
    super.oncdata(start, endIndex, offset);
  }

  override onprocessinginstruction(start: number, endIndex: number): void {
    this.endText();
    super.onprocessinginstruction(start, endIndex);
  }

  override ondeclaration(start: number, endIndex: number): void {
    this.endText();
    super.ondeclaration(start, endIndex);
  }

  override onend(): void {
    this.endText();
    super.onend();
  }

  /** Anything but text ends the text right after a <style> (its first child). */
  private endText(): void {
    if (this.textFrom >= 0) this.events.styleText(this.textFrom, this.textTo);
    this.styleOpen = false;
    this.textFrom = this.textTo = -1;
  }
}

/** `</noscript` ending a raw text: followed by whitespace, `/` or `>` (HTML's "appropriate end tag"). */
const NOSCRIPT_END = /<\/noscript[\t\n\f\r />]/gi;

/** Bytes without these (any case) cannot open a <noscript>: a tag's name is its source's letters. */
const NOSCRIPT = /noscript/i;

/**
 * parse5 reads a <noscript>'s content as raw text (scripting on, as in a browser), htmlparser2 as
 * markup. So each such content, in document order, is blanked (spaces: every offset stays) and the
 * text read again — a later <noscript> is only known once the earlier ones read as parse5 reads
 * them. A page whose bytes do not spell `noscript` is read once, without the probing pass (which
 * was half of the verifier's HTML parse).
 */
export function readHtml(text: string, events: HtmlEvents): void {
  let src = text;
  let from = 0;
  const quiet: HtmlEvents = { startTag: () => undefined, styleText: () => undefined };
  while (NOSCRIPT.test(src.slice(from))) {
    const probe = new Reader(quiet, from);
    probe.end(src);
    if (probe.noscriptAt < 0) break;
    NOSCRIPT_END.lastIndex = probe.noscriptAt;
    const end = NOSCRIPT_END.exec(src)?.index ?? src.length;
    src = src.slice(0, probe.noscriptAt) + ' '.repeat(end - probe.noscriptAt) + src.slice(end);
    from = end;
  }
  new Reader(events, src.length + 1).end(src);
}
