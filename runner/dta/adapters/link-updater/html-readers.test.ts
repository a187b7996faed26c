import { parse, parseFragment, type DefaultTreeAdapterMap } from 'parse5';
import { describe, expect, it } from 'vitest';
import { SITE_FILES } from '../../testing/fixture-repos';
import { afterEach } from 'vitest';
import { currentReaders, parseLinks, useReaders, type FoundLink } from './parsers';

/**
 * The HTML links parsers.ts finds with parse5's SAX mode against the same rules read off parse5's
 * full tree (what parsers.ts did until the tree cost two thirds of a bench run's HTML parse): the
 * reference below is that code. They must agree on every fixture and edge case; where they cannot
 * (start tags the tree builder drops), the difference is pinned down here.
 */
type P5Node = DefaultTreeAdapterMap['node'];
type P5Element = DefaultTreeAdapterMap['element'];
const URL_ATTRS = new Set(['href', 'src', 'action', 'formaction', 'poster', 'cite', 'data']);

/** The tree-based walk; CSS and the attribute rules come from parsers.ts itself (parseLinks of CSS), so only the HTML reading differs. */
function treeLinks(text: string, base = 0, fragment = false): Array<Pick<FoundLink, 'start' | 'end' | 'url'>> {
  const root = fragment ? parseFragment(text, { sourceCodeLocationInfo: true }) : parse(text, { sourceCodeLocationInfo: true });
  const out: Array<Pick<FoundLink, 'start' | 'end' | 'url'>> = [];
  const css = (t: string, at: number) => {
    for (const l of parseLinks('x.css', t)) out.push({ start: l.start + at, end: l.end + at, url: l.url });
  };
  const walk = (node: P5Node) => {
    if ('tagName' in node) {
      const el = node as P5Element;
      const loc = el.sourceCodeLocation;
      for (const attr of el.attrs) {
        const a = loc?.attrs?.[attr.name];
        if (!a) continue;
        const src = text.slice(a.startOffset, a.endOffset);
        const eq = src.indexOf('=');
        if (eq < 0) continue;
        let i = eq + 1;
        while (i < src.length && /\s/.test(src[i])) i++;
        const q = src[i];
        const quoted = q === '"' || q === "'";
        const raw = quoted ? src.slice(i + 1, src.lastIndexOf(q) > i ? src.lastIndexOf(q) : src.length) : src.slice(i);
        const at = base + a.startOffset + i + (quoted ? 1 : 0);
        const name = attr.name.toLowerCase();
        const lead = raw.length - raw.trimStart().length;
        if (URL_ATTRS.has(name) && raw.trim()) out.push({ start: at + lead, end: at + lead + raw.trim().length, url: raw.trim() });
        else if (name === 'srcset' || name === 'imagesrcset') {
          const re = /\s*([^\s,]+)(?:\s+[^,]*)?(?:,|$)/g;
          let m: RegExpExecArray | null;
          while ((m = re.exec(raw)) && m[0].length > 0) out.push({ start: at + m.index + m[0].indexOf(m[1]), end: at + m.index + m[0].indexOf(m[1]) + m[1].length, url: m[1] });
        } else if (name === 'content' && el.tagName === 'meta' && el.attrs.some((x) => x.name === 'http-equiv' && x.value.toLowerCase() === 'refresh')) {
          const m = /url\s*=\s*['"]?([^'"\s;]+)/i.exec(raw);
          if (m) out.push({ start: at + m.index + m[0].length - m[1].length, end: at + m.index + m[0].length, url: m[1] });
        } else if (name === 'style') css(`a{${raw}}`, at - 2);
      }
      if (el.tagName === 'style' && el.childNodes[0] && 'value' in el.childNodes[0]) {
        const t = el.childNodes[0].sourceCodeLocation;
        if (t) css(text.slice(t.startOffset, t.endOffset), base + t.startOffset);
      }
    }
    if ('childNodes' in node) for (const c of node.childNodes) walk(c as P5Node);
    if ('content' in node && node.content) walk(node.content as P5Node);
  };
  walk(root as P5Node);
  return out.sort((a, b) => a.start - b.start);
}

const sax = (text: string) => parseLinks('x.html', text).map(({ start, end, url }) => ({ start, end, url }));
/** The verifier's reading: htmlparser2 (every field, rewritable included, to compare with the adapter's). */
function h2(rel: string, text: string): FoundLink[] {
  useReaders('verifier');
  try {
    return parseLinks(rel, text);
  } finally {
    useReaders('adapter');
  }
}

/** Every way the tokenizer's state and the tree's reading could part, but do not. */
const AGREE: Record<string, string> = {
  script: '<script>var s = "<a href=\'http://old.example.com/in-script\'>";</script><a href="http://old.example.com/after">a</a>',
  noscript: '<noscript><a href="http://old.example.com/no">raw text while scripting is on</a></noscript><img src="http://old.example.com/i.png">',
  // The verifier probes for <noscript> only in bytes that spell it, in any case; a second one after the first.
  noscriptUpper: '<NOSCRIPT><a href="http://a/n1">1</a></NOSCRIPT><a href="http://a/out">o</a>',
  noscriptTwice: '<noScript><a href="http://a/n1">1</a></noscript><a href="http://a/between">b</a><noscript><img src="http://a/n2"></noscript ><a href="http://a/out">o</a>',
  textarea: '<textarea>\n<a href="http://old.example.com/t">t</a></textarea><title><link href="http://old.example.com/x"></title>',
  rawtext: '<xmp><a href="http://a/1"></xmp><iframe><a href="http://a/2"></iframe><noembed><a href="http://a/3"></noembed><noframes><a href="http://a/4"></noframes><a href="http://a/5">',
  plaintext: '<a href="http://a/1">1</a><plaintext><a href="http://a/2">',
  style: '<style>/* c */ .a { background: url(http://old.example.com/a.png) } </style><style></style><style>@import "http://x/y.css";</style>',
  svg: '<svg><style>.a{fill:url(http://x/s.svg#a)}</style><a href="http://old.example.com/svg-a">x</a><a xlink:href="http://old.example.com/xl">y</a><![CDATA[<a href="http://a/cdata">]]><foreignObject><a href="http://a/fo">f</a></foreignObject></svg><a href="http://a/out">o</a>',
  svgSelfClosingStyle: '<svg><style/>.a{background:url(http://x/not-style.png)}</svg><style/>.b{background:url(http://x/html-style.png)}</style>',
  math: '<math><mi><a href="http://a/m">m</a></mi><annotation-xml encoding="text/html"><a href="http://a/ax">x</a></annotation-xml></math>',
  attrs: '<a HREF = "  http://old.example.com/spaced  " href="http://dup/ignored">1</a><a href=http://unquoted/x?a=1>2</a><a href=\'http://single/y\'>3</a><a href>4</a><a href="">5</a>',
  entities: '<a href="http://old.example.com/?a=1&amp;b=2">e</a><a href="http&colon;//old.example.com/c">c</a><img src="x.png" srcset="http://a/1.png 1x,http://a/2.png 2x , http://a/3.png 3x">',
  meta: '<meta http-equiv="Refresh" content="0;URL=\'http://old.example.com/r\'"><meta http-equiv="refresh" content="5"><meta name="x" content="url=http://not/refresh">',
  template: '<template><a href="http://a/in-template">t</a><template><img src="http://a/nested"></template></template>',
  image: '<image src="http://a/image-is-img"><video poster="http://a/p" src="http://a/v"><source src="http://a/s"></video><blockquote cite="http://a/c"><object data="http://a/d"></object></blockquote><button formaction="http://a/f">b</button>',
  comments: '<!-- <a href="http://a/c"> --><!--> <a href="http://a/after-abrupt"><!doctype html><?pi <a href="http://a/pi"> ?><a href="http://a/last">',
  table: '<table><a href="http://a/fostered">f</a><tr><td><a href="http://a/td">t</a></td></tr></table>',
  unclosed: '<a href="http://a/1"><div><a href="http://a/2">',
  eofInTag: '<a href="http://a/1">1</a><a href="http://a/2',
  styleAttr: '<div style="background: url(\'http://old.example.com/a.png\'); border-image: url(http://x/b.png)"></div><p style="">e</p>',
  crlf: '<a\r\nhref="http://a/1"\r\n>x</a>\r\n<img\tsrc="http://a/2">',
  nul: '<a href="http://a/\u0000x">n</a><a href="http://a/ok">ok</a>',
};

/** Start tags parse5's tree builder drops, so the tree never had their links; the SAX reading has them. */
const DIFFER: Record<string, { extra: string[] }> = {
  nestedForm: { extra: ['http://a/inner'] },
  secondBody: { extra: ['http://a/body2'] },
};
const DIFFER_TEXT: Record<keyof typeof DIFFER, string> = {
  nestedForm: '<form action="http://a/outer"><form action="http://a/inner"></form></form>',
  secondBody: '<body><p>x</p><body cite="http://a/body2"></body>',
};

/** Bench-like generated pages (bench/dta.ts's shape, with more variety). */
function generated(n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    out.push(
      `<!doctype html><html><head><link rel="stylesheet" href="https://old.example.com/s${i}.css"><style>.h${i}{background:url(https://old.example.com/h${i}.png)}</style></head><body>\n` +
        `${'<p>Lorem <b>ipsum</b> dolor &amp; sit amet.</p>\n'.repeat(i % 7)}<a href="http://old.example.com/p${i + 1}">next</a> <a href='https://elsewhere.org/${i}'>x</a>\n` +
        `<img src="https://old.example.com/i${i}.png" srcset="https://old.example.com/i${i}.png 1x, https://old.example.com/i${i}@2x.png 2x">\n` +
        `${i % 3 === 0 ? '<script>document.write("<a href=\\"http://old.example.com/s\\">")</script>' : ''}${i % 4 === 0 ? '<form action=/search><input formaction="http://old.example.com/f"></form>' : ''}\n</body></html>\n`,
    );
  }
  return out;
}

describe('link_updater HTML through parse5 SAX mode', () => {
  it('finds exactly the links the tree-based reading found, at the same offsets, on the fixtures, the edge cases and generated pages', () => {
    const texts = [...Object.entries(SITE_FILES).filter(([rel]) => rel.endsWith('.html')).map(([, t]) => t), ...Object.values(AGREE), ...generated(60)];
    for (const text of texts) expect({ text, links: sax(text) }).toEqual({ text, links: treeLinks(text) });
    // Not vacuous: the edge cases hold links, and the raw-text ones hide theirs from both.
    expect(sax(AGREE.rawtext).map((l) => l.url)).toEqual(['http://a/5']);
    expect(sax(AGREE.svg).map((l) => l.url)).toEqual(['http://x/s.svg#a', 'http://old.example.com/svg-a', 'http://a/fo', 'http://a/out']);
    expect(sax(AGREE.svgSelfClosingStyle).map((l) => l.url)).toEqual(['http://x/html-style.png']);
  });

  it('differs from the tree only where the tree builder drops a start tag: the SAX reading counts its links, on both sides of a run alike', () => {
    for (const [name, { extra }] of Object.entries(DIFFER)) {
      const text = DIFFER_TEXT[name as keyof typeof DIFFER];
      const saxUrls = sax(text).map((l) => l.url);
      const treeUrls = treeLinks(text).map((l) => l.url);
      expect(saxUrls.filter((u) => !treeUrls.includes(u))).toEqual(extra);
      expect(treeUrls.every((u) => saxUrls.includes(u))).toBe(true);
    }
  });

  it('reads raw HTML inside Markdown as the fragment reading did', () => {
    const md = 'Text <a href="http://old.example.com/in">in</a> and\n\n<div><img src="https://old.example.com/block.png">\n<script>"<a href=http://a/x>"</script></div>\n';
    const urls = parseLinks('x.md', md).map((l) => l.url);
    expect(urls).toEqual(['http://old.example.com/in', 'https://old.example.com/block.png']);
    const block = md.indexOf('<div>');
    expect(treeLinks(md.slice(block), block, true).map((l) => l.url)).toEqual(['https://old.example.com/block.png']);
  });
});

describe("the verifier's HTML reader (htmlparser2) against the adapter's (parse5 SAX mode)", () => {
  afterEach(() => expect(currentReaders()).toBe('adapter'));

  it('gives the same links, offsets and rewritability on the fixtures, the edge cases and generated pages', () => {
    const texts = [...Object.entries(SITE_FILES).filter(([rel]) => rel.endsWith('.html')).map(([, t]) => t), ...Object.values(AGREE), ...Object.values(DIFFER_TEXT), ...generated(60)];
    for (const text of texts) expect({ text, links: h2('x.html', text) }).toEqual({ text, links: parseLinks('x.html', text) });
    for (const [rel, text] of Object.entries(SITE_FILES).filter(([r]) => !r.endsWith('.md'))) expect({ rel, links: h2(rel, text) }).toEqual({ rel, links: parseLinks(rel, text) });
  });
});
