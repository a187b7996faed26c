import { parse as micromarkParse, postprocess, preprocess } from 'micromark';
import postcss from 'postcss';
import valueParser from 'postcss-value-parser';
import { describe, expect, it } from 'vitest';
import { benchSite } from '../../testing/bench-site';
import { parseLinks } from './parsers';

/** Destinations micromark gives with a parse context of its own (what parsers.ts did per file before it kept one). */
function freshDestinations(text: string): string[] {
  const events = postprocess(micromarkParse().document().write(preprocess()(text, undefined, true)));
  return events.filter(([kind, t]) => kind === 'enter' && (t.type === 'resourceDestinationString' || t.type === 'definitionDestinationString' || t.type === 'autolinkProtocol')).map(([, t]) => t.type);
}

/** Markdown files whose reading depends on the state a parse keeps: definitions and lazy lines. */
const DEFINES = '[ref]: http://old.example.com/defined\n\n> quoted\nlazy line\n';
// `[a][ref](…)`: with `ref` defined, `[a][ref]` is a reference and `(…)` text; without, `[ref](…)` is a link.
const USES = 'A [a][ref](http://old.example.com/z) and\n\n    indented code\n    [x](http://old.example.com/in-code)\n\nAnd [y](http://old.example.com/y).\n';

describe('link_updater Markdown links with one parse context per process', () => {
  it('never carry a definition or a lazy line from one file into the next', () => {
    const alone = parseLinks('b.md', USES);
    expect(alone.map((l) => l.url)).toEqual(['http://old.example.com/z', 'http://old.example.com/y']);
    expect(alone.length).toBe(freshDestinations(USES).length);
    // The definition and the lazy line 2 of another file, parsed just before, change nothing.
    expect(parseLinks('a.md', DEFINES).map((l) => l.url)).toEqual(['http://old.example.com/defined']);
    expect(parseLinks('b.md', USES)).toEqual(alone);
    // In the same file the definition counts: `[a][ref]` is a reference, the `(…)` after it text.
    expect(parseLinks('c.md', `${DEFINES}\n${USES}`).map((l) => l.url)).toEqual(['http://old.example.com/defined', 'http://old.example.com/y']);
  });
});

describe('link_updater CSS links', () => {
  it('are read from the text alone: a source-map annotation is neither loaded nor a reason to find no links', () => {
    const css = '.a { background: url(http://old.example.com/a.png) }\n@import "http://old.example.com/b.css";\n';
    const links = (text: string) => parseLinks('s.css', text).map((l) => [l.url, l.start]);
    // A broken inline map (postcss threw on it, and the file read as having no links) and a map file that is not there.
    for (const annotation of ['/*# sourceMappingURL=data:application/json;base64,bm90IGpzb24= */\n', '/*# sourceMappingURL=missing.css.map */\n']) {
      expect(links(`${css}${annotation}`)).toEqual(links(css));
    }
    expect(links(css)).toEqual([
      ['http://old.example.com/a.png', 21],
      ['http://old.example.com/b.css', 62],
    ]);
  });
});

/**
 * The CSS reading before it was tokens: postcss's tree, every declaration's value and every
 * `@import`'s params through postcss-value-parser. On valid CSS whose URLs are in declarations and
 * imports the tokens must find exactly these links.
 */
function postcssLinks(text: string): Array<{ start: number; end: number; url: string; rewritable: boolean }> {
  const out: Array<{ start: number; end: number; url: string; rewritable: boolean }> = [];
  let root: postcss.Root;
  try {
    root = postcss.parse(text, { map: false });
  } catch {
    return out;
  }
  const fromValue = (value: string, valueStart: number) =>
    valueParser(value).walk((node) => {
      if (node.type !== 'function' || node.value.toLowerCase() !== 'url') return undefined;
      const arg = node.nodes[0];
      if (!arg) return false;
      const start = valueStart + arg.sourceIndex + (arg.type === 'string' ? 1 : 0);
      out.push({ start, end: start + arg.value.length, url: arg.value, rewritable: text.slice(start, start + arg.value.length) === arg.value });
      return false;
    });
  root.walkDecls((decl) => {
    const raws = decl.raws as { value?: { raw: string } };
    fromValue(raws.value?.raw ?? decl.value, decl.source!.start!.offset + decl.prop.length + (decl.raws.between ?? ':').length);
  });
  root.walkAtRules('import', (rule) => {
    const at = rule.source!.start!.offset + 1 + rule.name.length + (rule.raws.afterName ?? '').length;
    const first = valueParser(rule.params).nodes[0];
    if (first?.type === 'string') out.push({ start: at + first.sourceIndex + 1, end: at + first.sourceIndex + 1 + first.value.length, url: first.value, rewritable: true });
    else fromValue(rule.params, at);
  });
  return out.sort((a, b) => a.start - b.start);
}

/** Valid CSS whose reading depends on the tokens: comments, strings, escapes, nesting, cases, whitespace. */
const CSS_VALID: string[] = [
  '.a { background: url(http://old.example.com/a.png) }\n@import "http://old.example.com/b.css";\n',
  '/* url(http://old.example.com/in-comment) */ .b { color: red; background: URL( "https://old.example.com/c.png" ) no-repeat }',
  '.c { content: "url(http://old.example.com/in-string)"; background-image: url(\'https://old.example.com/d.png\'), url(e.png) }',
  '.d { background: url("http://old\\2e example.com/h.png"); mask: url(http://old.example.com/\\)x) }',
  '@import url(http://old.example.com/f.css) screen;\n@import"http://old.example.com/no-space.css";\n@import url("http://old.example.com/quoted.css");',
  '@media (min-width: 10px) { .e { background: url(http://old.example.com/g.png) } @font-face { src: url(https://old.example.com/font.woff2) format("woff2") } }',
  '.f { --hero: url(http://old.example.com/custom.png); background: var(--hero) !important; }',
  '.g { .nested & { background: url(http://old.example.com/nested.png) } }',
  '.h { background:url(http://old.example.com/no-space.png);background : /* c */ url( http://old.example.com/after-comment.png ) }',
  '.k { background: url() url( ) url("") }',
  '.m { background: url(http://old.example.com/crlf.png) }\r\n.n {\r\n  background: url(http://old.example.com/crlf2.png);\r\n}',
  '.p { background: image-set(url(http://old.example.com/1x.png) 1x, url("http://old.example.com/2x.png") 2x) }',
  '',
  '.x { color: red }',
  '@charset "utf-8"; :root { --u: "url(x)" } .q::before { content: url(http://old.example.com/q.svg) }',
  '@import /* c */ "http://old.example.com/after-comment.css";',
];

describe('link_updater CSS links', () => {
  it("are CSS Syntax's url tokens, url() strings and @import strings: in valid declarations and imports, what postcss's tree found", () => {
    const site = Object.entries(benchSite(60, 0)).filter(([rel]) => rel.endsWith('.css')).map(([, text]) => text);
    for (const text of [...CSS_VALID, ...site]) expect(parseLinks('s.css', text), text).toEqual(postcssLinks(text));
    const urls = CSS_VALID.flatMap((t) => parseLinks('s.css', t).map((l) => l.url));
    expect(urls).toEqual(expect.arrayContaining(['http://old.example.com/a.png', 'http://old.example.com/f.css', 'https://old.example.com/font.woff2', 'http://old.example.com/custom.png', 'http://old.example.com/nested.png', 'http://old.example.com/\\)x']));
    expect(urls.filter((u) => /in-comment|in-string/.test(u))).toEqual([]);
  });

  it('are found as a browser finds them where the tree had none: at-rule preludes, CSS with an error elsewhere, a BOM', () => {
    const at = (text: string, url: string) => ({ start: text.indexOf(url), end: text.indexOf(url) + url.length, url, rewritable: true });
    const cases: Array<[string, string[]]> = [
      // postcss threw on each of these (unclosed block, missed semicolon, unexpected `}`): the file read as having no links.
      ['.i { background: url(http://old.example.com/unclosed.png) ', ['http://old.example.com/unclosed.png']],
      ['.j { color: red background: url(http://old.example.com/missed-semicolon.png) }', ['http://old.example.com/missed-semicolon.png']],
      ['a{b:c}}} .o { background: url(http://old.example.com/extra-close.png) }', ['http://old.example.com/extra-close.png']],
      // Outside declarations: URLs all the same.
      ['@namespace svg url(http://www.w3.org/2000/svg); @supports (background: url(http://old.example.com/s.png)) {}', ['http://www.w3.org/2000/svg', 'http://old.example.com/s.png']],
      ['@IMPORT "http://old.example.com/upper.css";', ['http://old.example.com/upper.css']],
      // The tree's offsets were one short after a byte-order mark (postcss drops it); the tokens' are the text's.
      ['\ufeff.l { background: url(http://old.example.com/bom.png) }', ['http://old.example.com/bom.png']],
      // Cut by the end of the text: the URL up to there.
      ['.r { background: url(http://old.example.com/eof.png', ['http://old.example.com/eof.png']],
      ['.s { background: url("http://old.example.com/eof-string.png', ['http://old.example.com/eof-string.png']],
      // Not URLs: a bad url token (a quote inside), a function named otherwise, an escaped function name.
      ['.t { a: url(http://old.example.com/x"y); b: xurl(http://old.example.com/z); c: u\\72l(http://old.example.com/w) }', []],
    ];
    for (const [text, urls] of cases) expect(parseLinks('s.css', text), text).toEqual(urls.map((u) => at(text, u)));
  });
});
