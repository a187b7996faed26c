import { tests as commonmarkExamples } from 'commonmark-spec';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runDta, setVerifierMemoDir } from '../../engine';
import { dropKeptProposals } from '../../kept-proposals';
import { DOC_FILES_BEFORE, makeRepo, SITE_FILES } from '../../testing/fixture-repos';
import { VERIFIER_MEMO_FILE } from '../../verifier/memo';
import { verifiersExited } from '../../verifier/spawn';
import { targetedHost } from './measure';
import { currentReaders, micromarkLinks, parseLinks, useReaders } from './parsers';

/**
 * The verifier's Markdown reading (markdown-it) against the adapter's (micromark): the same links
 * — the same decoded URLs, as many times — on every fixture, edge case and generated page. Only
 * the URLs are compared: markdown-it gives no offsets, and the verifier needs only the count.
 */
function urls(rel: string, text: string, readers: 'adapter' | 'verifier'): string[] {
  // The adapter reads Markdown through markdown-it too now (markdown-places.ts, held to micromark
  // there): the verifier's reading is compared with micromark's itself.
  if (readers === 'adapter') return micromarkLinks(text).map((l) => l.url).sort();
  useReaders(readers);
  try {
    return parseLinks(rel, text)
      .map((l) => l.url)
      .sort();
  } finally {
    useReaders('adapter');
  }
}

const EDGES: Record<string, string> = {
  reference: 'A [full][ref], a [collapsed][], a [shortcut] and [missing][nope].\n\n[ref]: http://old.example.com/r "T"\n[collapsed]: <http://old.example.com/c>\n[shortcut]: http://old.example.com/s\n',
  duplicate: '[a]: http://old.example.com/first\n[A]: http://old.example.com/second\n\n[a]\n',
  refThenInline: '[ref]: http://old.example.com/defined\n\nA [a][ref](http://old.example.com/z) and [ref](http://old.example.com/y).\n',
  noDefThenInline: 'A [a][ref](http://old.example.com/z).\n',
  empty: '[a]() [b](<>) [c]( ) ![d]()\n\n[e]: <>\n',
  autolinks: '<http://old.example.com/a> <mailto:x@y.z> <x@example.com> <HTTPS://OLD.EXAMPLE.COM/b> <not a link> <a+b:c>\n',
  code: '`[a](http://x/in-span)` and ``<http://x/auto>``\n\n```\n[b](http://x/fenced)\n```\n\n    [c](http://x/indented)\n\n~~~md\n<a href="http://x/tilde">\n~~~\n',
  html: '<div>\n<a href="http://old.example.com/block">b</a>\n</div>\n\nText <img src="http://old.example.com/inline.png"> and <!-- <a href="http://x/c"> --> end.\n\n<script>\n"<a href=http://x/script>"\n</script>\n',
  escapes: '[a](http://old\\.example.com/a) [b](http://old&#46;example.com/b) [c](<http://x/with space>) [d](http://x/a\\)b) [e](http://x/(nested))\n',
  titles: '[a](http://x/a "title [b](http://x/not)") ![i](http://x/i.png \'t\') [c](http://x/c (paren title))\n',
  nesting: '[![img](http://x/img.png)](http://x/link) [a [b](http://x/inner)](http://x/outer) [`code](http://x/not)`](http://x/real)\n',
  schemes: '[j](javascript:alert(1)) [f](file:///etc/passwd) [d](data:text/plain,hi) [v](vbscript:x) [rel](../up.md#anchor)\n',
  containers: '> quote [a](http://x/q)\n> > nested [b](http://x/qq)\nlazy [c](http://x/lazy)\n\n- item [d](http://x/li)\n  - sub [e](http://x/sub)\n\n1. one\n\n   [f]: http://x/def-in-list\n',
  blockquoteHtml: '> <div>\n> <a href="http://x/bq">x</a>\n> </div>\n',
  setext: 'Title [a](http://x/h)\n===\n\n[b]: http://x/b\nnot a title\n---\n',
  defInterrupt: 'para\n[a]: http://x/cannot-interrupt\n\n[b]:\nhttp://x/next-line\n\n[c]: http://x/c\n"title"\n',
  crlf: '[a](http://x/a)\r\n\r\n[b]: http://x/b\r\n',
  deepList: `${Array.from({ length: 30 }, (_, i) => `${'  '.repeat(i)}- [l${i}](http://x/${i})`).join('\n')}\n`,
  deepQuote: `${'>'.repeat(40)} [q](http://x/deep)\n`,
  brackets: '[a]b](http://x/no) [a\\]b](http://x/yes) [a](http://x/one) [](http://x/empty-text) [a]\n(http://x/newline)\n',
  entityDest: '[a](http://x/&amp;) [b](http://x/&copy;)\n',
};

/**
 * One known difference: markdown-it also decodes a legacy character reference without its `;`
 * (`&notanentity;` → `¬anentity;`), micromark does not. No such reference decodes to a letter, a
 * digit or `/ ? # . : -`, so it cannot make or unmake a host prefix: the counts agree.
 */
const LEGACY = '[a](http://old.example.com/&notanentity;) [b](http://old.example.com&copy-x) [c](http://old.example.com&amp/x) [d](http&colonx//old.example.com/)\n';
const HOSTS = ['http://old.example.com', 'https://old.example.com'];
const classes = (list: string[]) => list.map((u) => (targetedHost(u, HOSTS) ? 'old' : 'other'));

function generated(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `# Page ${i}\n\n${'Some *prose* for _the_ page.\n'.repeat(i % 9)}\nSee [next](http://old.example.com/p${i + 1}) and ![img](https://old.example.com/i${i}.png "t").\n\n${i % 2 ? '> ' : ''}[ref${i}]: https://old.example.com/ref${i}\n${i % 3 === 0 ? `\nA [use][ref${i}] and <https://old.example.com/auto${i}>.\n` : ''}`);
}

// The last case starts a verifier process; a loaded 2-core machine needs time.
vi.setConfig({ testTimeout: 180_000 });

describe("the verifier's Markdown reader (markdown-it) against the adapter's (micromark)", () => {
  afterEach(() => expect(currentReaders()).toBe('adapter'));
  afterEach(() => setVerifierMemoDir(null));

  it('is what the verifier process reads with: its memo holds placeless Markdown links, which micromark never gives', async () => {
    const repo = makeRepo(SITE_FILES);
    const memoDir = fs.mkdtempSync(path.join(os.tmpdir(), 'readers-memo-'));
    try {
      setVerifierMemoDir(memoDir);
      const out = await runDta({ tool: 'link_updater', version: '1.0', mode: 'dry-run', target: { repo_path: repo, glob: 'site/**' }, params: { from_hosts: ['http://old.example.com', 'https://old.example.com'], to_host: 'https://new.example.com' } });
      expect(out.verifier.passed).toBe(true);
      dropKeptProposals();
      await verifiersExited();
      const memo = JSON.parse(fs.readFileSync(path.join(memoDir, VERIFIER_MEMO_FILE), 'utf8')) as { entries: Array<[string, Array<{ start: number; url: string }>]> };
      const links = memo.entries.flatMap(([, l]) => l);
      expect(links).toContainEqual(expect.objectContaining({ start: -1, url: 'http://old.example.com/about' }));
      // …and the adapter's own reading of the same file has the offsets.
      expect(parseLinks('guide.md', SITE_FILES['site/docs/guide.md']).every((l) => l.start >= 0)).toBe(true);
    } finally {
      fs.rmSync(repo, { recursive: true, force: true });
      fs.rmSync(memoDir, { recursive: true, force: true });
    }
  });

  it('finds the same links on the fixtures, the edge cases and generated pages', () => {
    const texts: Array<[string, string]> = [...Object.entries(SITE_FILES), ...Object.entries(DOC_FILES_BEFORE), ...Object.entries(EDGES).map(([k, t]): [string, string] => [`${k}.md`, t]), ...generated(60).map((t, i): [string, string] => [`g${i}.md`, t])];
    for (const [rel, text] of texts.filter(([r]) => /\.(md|markdown)$/.test(r))) expect({ rel, urls: urls(rel, text, 'verifier') }).toEqual({ rel, urls: urls(rel, text, 'adapter') });
    // Not vacuous: the edge cases hold links, repeated definitions each count, references do not.
    expect(urls('x.md', EDGES.duplicate, 'verifier')).toEqual(['http://old.example.com/first', 'http://old.example.com/second']);
    expect(urls('x.md', EDGES.reference, 'verifier')).toHaveLength(3);
  });

  it("finds micromark's links on every one of CommonMark's examples, emphasis and text joining switched off", () => {
    const differ = commonmarkExamples.filter((ex) => JSON.stringify(urls('ex.md', ex.markdown, 'verifier')) !== JSON.stringify(urls('ex.md', ex.markdown, 'adapter')));
    expect(differ.map((ex) => ex.number)).toEqual([]);
    // Not vacuous: the examples hold links inside emphasis and emphasis inside link text.
    expect(commonmarkExamples.filter((ex) => /\*\[|\]\(.*\*|\[\*/.test(ex.markdown) && urls('ex.md', ex.markdown, 'verifier').length > 0).length).toBeGreaterThan(5);
  });

  it('differs only in decoding legacy references without `;`, never in what is a link to the host', () => {
    const v = urls('l.md', LEGACY, 'verifier');
    const a = urls('l.md', LEGACY, 'adapter');
    expect(v).not.toEqual(a);
    expect(classes(v).sort()).toEqual(classes(a).sort());
    expect(classes(a).filter((c) => c === 'old')).toHaveLength(1);
  });
});
