import MarkdownIt from 'markdown-it';
import type StateBlock from 'markdown-it/lib/rules_block/state_block.mjs';
import type StateCore from 'markdown-it/lib/rules_core/state_core.mjs';
import type StateInline from 'markdown-it/lib/rules_inline/state_inline.mjs';

/**
 * Markdown links read with markdown-it — the verifier's Markdown reader, a CommonMark parser
 * written apart from micromark (the adapter's), and 3–5× cheaper on the bench's pages. It counts
 * what parsers.ts counts with micromark: inline links' and images' destinations, reference
 * definitions (each one, a repeated label too), autolinks, and the raw HTML's links. It gives no
 * source offsets (markdown-it keeps only line ranges), which the verifier needs only for its
 * host-swap shortcut (verifier/host-rewrite.ts declines such links and parses again instead).
 */

export interface MarkdownEvents {
  /** A destination, decoded (escapes and character references), as micromark's decodeString gives it. */
  url(url: string): void;
  /** A raw HTML block or inline tag, to read for links. */
  html(source: string): void;
}

let current: MarkdownEvents | null = null;

/** A rule as markdown-it has it, to wrap (Ruler keeps its rules in `__rules__`; its typings leave that out). */
export function ruleOf<F>(ruler: object, name: string): F {
  const rule = (ruler as { __rules__: Array<{ name: string; fn: F }> }).__rules__.find((r) => r.name === name);
  if (!rule) throw new Error(`markdown-it has no rule ${name}`);
  return rule.fn;
}

/**
 * Rules that only shape text: emphasis (its delimiters and their pairing; a link's brackets bind
 * tighter than emphasis, and a rule's silent scan of a link label never runs it) and the joining
 * of text tokens. No link starts, ends or hides by them; the readers' agreement tests and
 * CommonMark's examples hold the links to micromark's.
 */
const TEXT_ONLY_RULES = ['emphasis', 'balance_pairs', 'fragments_join', 'text_join'];
/** What markdown-it's normalize rule changes: CR line endings and NUL (it rewrote every LF as LF too). */
const NORMALIZED = /[\r\0]/;

/**
 * markdown-it as both link readers configure it (this one and the adapter's markdown-places.ts):
 * CommonMark with raw HTML, every destination as written (micromark neither percent-encodes nor
 * refuses a scheme), nesting without a limit as micromark's, and only the rules links depend on.
 */
export function linkReadingMarkdownIt(): MarkdownIt {
  const md = new MarkdownIt('commonmark', { html: true, linkify: false });
  md.normalizeLink = (url) => url;
  md.validateLink = () => true;
  (md.options as { maxNesting?: number }).maxNesting = Number.MAX_SAFE_INTEGER;
  md.disable(TEXT_ONLY_RULES);
  const normalize = ruleOf<(state: StateCore) => void>(md.core.ruler, 'normalize');
  md.core.ruler.at('normalize', (state: StateCore) => {
    if (NORMALIZED.test(state.src)) normalize(state);
  });
  return md;
}

function make(): MarkdownIt {
  const md = linkReadingMarkdownIt();

  // Inline links and images: the inline form only (it ends at its `)`); a reference form's URL is
  // its definition's, counted once where it is defined — as micromark's token stream has it.
  for (const name of ['link', 'image'] as const) {
    const rule = ruleOf<(state: StateInline, silent: boolean) => boolean>(md.inline.ruler, name);
    md.inline.ruler.at(name, (state: StateInline, silent: boolean) => {
      const from = state.tokens.length;
      const ok = rule(state, silent);
      if (ok && !silent && state.src.charCodeAt(state.pos - 1) === 0x29 /* ) */) {
        const token = state.tokens.slice(from).find((t) => t.type === (name === 'link' ? 'link_open' : 'image'));
        const url = token?.attrGet(name === 'link' ? 'href' : 'src');
        if (url) current?.url(url);
      }
      return ok;
    });
  }

  // Definitions: markdown-it keeps only a label's first; each is read into a fresh table, then
  // merged as markdown-it would have (first wins), so references resolve exactly as before.
  const reference = ruleOf<(state: StateBlock, start: number, end: number, silent: boolean) => boolean>(md.block.ruler, 'reference');
  md.block.ruler.at(
    'reference',
    (state: StateBlock, start: number, end: number, silent: boolean) => {
      if (silent) return reference(state, start, end, silent);
      const env = state.env as { references?: Record<string, { href: string }> };
      const kept = env.references;
      env.references = {};
      const ok = reference(state, start, end, silent);
      const found = env.references;
      env.references = kept ?? {};
      for (const [label, def] of Object.entries(found)) {
        if (def.href) current?.url(def.href);
        if (!(label in env.references)) env.references[label] = def;
      }
      return ok;
    },
  );
  return md;
}

let md: MarkdownIt | null = null;

export function readMarkdown(text: string, events: MarkdownEvents): void {
  md ??= make();
  current = events;
  try {
    const walk = (tokens: ReturnType<MarkdownIt['parse']>) => {
      for (const t of tokens) {
        if (t.type === 'html_block' || t.type === 'html_inline') events.html(t.content);
        else if (t.type === 'link_open' && t.markup === 'autolink') {
          const url = t.attrGet('href');
          if (url) events.url(url);
        }
        if (t.children) walk(t.children);
      }
    };
    walk(md.parse(text, {}));
  } finally {
    current = null;
  }
}
