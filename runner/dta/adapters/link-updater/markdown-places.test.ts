import { tests } from 'commonmark-spec';
import { describe, expect, it } from 'vitest';
import { DOC_FILES_BEFORE, SITE_FILES } from '../../testing/fixture-repos';
import { linkUpdater } from './adapter';
import { markdownPlaces } from './markdown-places';
import { micromarkLinks, parseLinks, type FoundLink } from './parsers';

/**
 * The adapter's Markdown reading through markdown-it with offsets (markdown-places.ts) against
 * micromark's token stream, which it replaced as the adapter's reader: the same links — offsets,
 * decoded URLs, rewritability — on every input, so the same rewrites. Inputs: the fixtures,
 * edge cases, generated pages and all of CommonMark's own examples (commonmark-spec).
 */

function sorted(links: FoundLink[]): FoundLink[] {
  return [...links].sort((a, b) => a.start - b.start || a.end - b.end || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
}

const EDGES: Record<string, string> = {
  reference: 'A [full][ref], a [collapsed][], a [shortcut] and [missing][nope].\n\n[ref]: http://old.example.com/r "T"\n[collapsed]: <http://old.example.com/c>\n[shortcut]: http://old.example.com/s\n',
  duplicate: '[a]: http://old.example.com/first\n[A]: http://old.example.com/second\n\n[a]\n',
  refThenInline: '[ref]: http://old.example.com/defined\n\nA [a][ref](http://old.example.com/z) and [ref](http://old.example.com/y).\n',
  empty: '[a]() [b](<>) [c]( ) ![d]()\n\n[e]: <>\n',
  autolinks: '<http://old.example.com/a> <mailto:x@y.z> <x@example.com> <HTTPS://OLD.EXAMPLE.COM/b> <not a link> <a+b:c>\n',
  code: '`[a](http://x/in-span)` and ``<http://x/auto>``\n\n```\n[b](http://x/fenced)\n```\n\n    [c](http://x/indented)\n',
  html: '<div>\n<a href="http://old.example.com/block">b</a>\n</div>\n\nText <img src="http://old.example.com/inline.png"> and <!-- <a href="http://x/c"> --> end.\n\n  <style>\n.x { background: url(http://old.example.com/bg.png) }\n</style>\n',
  htmlAcrossLines: 'Text <a\n   href="http://old.example.com/multi">x</a>\n\n> quoted <img\n> src="http://old.example.com/q.png">\n',
  escapes: '[a](http://old\\.example.com/a) [b](http://old&#46;example.com/b) [c](<http://x/with space>) [d](http://x/a\\)b) [e](http://x/(nested))\n',
  nesting: '[![img](http://x/img.png)](http://x/link) [a [b](http://x/inner)](http://x/outer) ![alt [in](http://x/in-alt) ![deeper](http://x/d)](http://x/img2)\n',
  containers: '> quote [a](http://x/q)\n> > nested [b](http://x/qq)\nlazy [c](http://x/lazy)\n\n- item [d](http://x/li)\n  - sub [e](http://x/sub)\n\n1. one\n\n   [f]: http://x/def-in-list\n',
  tabs: '-\tfoo [a](http://x/tab)\n\n\t\tbar\n\n>\t\t[b](http://x/tabbed-quote)\n\n- a\n\n\t[c](http://x/tab-in-item)\n',
  headings: '# Title [a](http://x/h1) #\n## [b](http://x/h2) ##   \n  ### c [d](http://x/h3)\nSetext [e](http://x/s)\n  and [f](http://x/s2)  \n===\n',
  trailing: 'para [a](http://x/a)   \nnext [b](http://x/b)\\\nlast [c](http://x/c)  \n',
  unicodeSpace: '\u00a0[a](http://x/nbsp)\u00a0\n\u3000[b](http://x/ideographic)\n',
  crlf: '[a](http://x/a)\r\n\r\n[b]: http://x/b\r\n',
  bom: '\ufeff[a](http://x/a)\n',
  deepQuote: `${'>'.repeat(40)} [q](http://x/deep)\n`,
  deepList: `${Array.from({ length: 30 }, (_, i) => `${'  '.repeat(i)}- [l${i}](http://x/${i})`).join('\n')}\n`,
};

function generated(n: number): string[] {
  return Array.from(
    { length: n },
    (_, i) =>
      `# Page ${i}\n\n${'Some *prose* for _the_ page.\n'.repeat(i % 9)}${i % 4 === 1 ? '- a list\n  with [item](http://old.example.com/li) \n' : ''}\nSee [next](http://old.example.com/p${i + 1}) and ![img](https://old.example.com/i${i}.png "t").\n\n${i % 2 ? '> ' : ''}[ref${i}]: https://old.example.com/ref${i}\n${i % 3 === 0 ? `\nA [use][ref${i}] and <https://old.example.com/auto${i}>.\n` : ''}${i % 5 === 2 ? '\n<p>raw <a href="http://old.example.com/raw">x</a></p>\n' : ''}${i % 7 === 3 ? '\n```\n[not](http://old.example.com/code)\n```\n' : ''}`,
  );
}

const SPEC = tests;

describe("the adapter's Markdown offsets (markdown-it) against micromark", () => {
  it("finds micromark's links exactly (offsets, URLs, rewritability) on all of CommonMark's examples, placing each through markdown-it", () => {
    expect(SPEC.length).toBeGreaterThan(600);
    for (const t of SPEC) {
      // The spec writes tabs as →.
      const text = t.markdown.replace(/→/g, '\t');
      expect({ example: t.number, places: markdownPlaces(text) !== null }).toEqual({ example: t.number, places: true });
      expect({ example: t.number, links: sorted(parseLinks('x.md', text)) }).toEqual({ example: t.number, links: sorted(micromarkLinks(text)) });
    }
  });

  it('finds the same links on the fixtures, the edge cases and 60 generated pages; only CR line endings and a BOM go to micromark', () => {
    const texts: Array<[string, string]> = [...Object.entries(SITE_FILES), ...Object.entries(DOC_FILES_BEFORE), ...Object.entries(EDGES).map(([k, t]): [string, string] => [`${k}.md`, t]), ...generated(60).map((t, i): [string, string] => [`g${i}.md`, t])];
    const fellBack: string[] = [];
    let links = 0;
    for (const [rel, text] of texts.filter(([r]) => r.endsWith('.md'))) {
      if (markdownPlaces(text) === null) fellBack.push(rel);
      const got = sorted(parseLinks(rel, text));
      links += got.length;
      expect({ rel, links: got }).toEqual({ rel, links: sorted(micromarkLinks(text)) });
    }
    expect(fellBack.sort()).toEqual(['bom.md', 'crlf.md']);
    // Not vacuous: the inputs hold links, raw HTML's among them.
    expect(links).toBeGreaterThan(300);
    expect(parseLinks('h.md', EDGES.html).map((l) => l.url)).toEqual(['http://old.example.com/block', 'http://old.example.com/inline.png', 'http://old.example.com/bg.png']);
  });

  it('makes the same rewrites as with micromark', async () => {
    const params = { from_hosts: ['http://old.example.com', 'https://old.example.com'], to_host: 'https://new.example.com' };
    const files = new Map<string, string>([...Object.entries(EDGES), ...generated(60).map((t, i): [string, string] => [`g${i}`, t])].map(([k, t]) => [`${k}.md`, t]));
    const proposal = await linkUpdater.propose(files, params, { allFiles: new Set(files.keys()), read: (rel) => files.get(rel), seed: 0 });
    // The rewrite by micromark's offsets, back to front, as the adapter does it.
    let units = 0;
    for (const [rel, text] of files) {
      let next = text;
      for (const l of sorted(micromarkLinks(text)).reverse()) {
        const lower = l.url.toLowerCase();
        const host = params.from_hosts.find((h) => lower.startsWith(h) && ['', '/', '?', '#'].includes(l.url.charAt(h.length)));
        if (!host || !l.rewritable) continue;
        next = next.slice(0, l.start) + params.to_host + l.url.slice(host.length) + next.slice(l.end);
        units++;
      }
      expect({ rel, text: proposal.changes.get(rel) ?? text }).toEqual({ rel, text: next });
    }
    expect(proposal.units).toBe(units);
    expect(units).toBeGreaterThan(150);
  });
});
