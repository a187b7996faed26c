import { describe, expect, it } from 'vitest';
import { linkUpdater } from '../adapters/link-updater/adapter';
import { parseLinks } from '../adapters/link-updater/parsers';
import { SITE_FILES } from '../testing/fixture-repos';
import { everyHostSwapped, linksAfterHostSwap } from './host-rewrite';

const FROM = ['http://old.example.com', 'https://old.example.com'];
const TO = 'https://new.example.com';

/** Files with every kind of link the parsers find, and spellings the swap must leave to a parse. */
const FILES: Record<string, string> = {
  ...SITE_FILES,
  'quotes.html': `<a href='http://old.example.com/a' title="x">a</a><a href=http://old.example.com/b>b</a>\n<img srcset="http://old.example.com/1.png 1x,https://old.example.com/2.png 2x">\n`,
  'amp.html': '<a href="http://old.example.com/?a=1&amp;b=2">amp after the host</a>\n',
  'entity.html': '<a href="http://old&#46;example.com/e">entity in the host</a> <a href="https://old.example.com/ok">ok</a>\n',
  'inline-html.md': 'Text <a href="http://old.example.com/in">in</a> and\n\n<div><img src="https://old.example.com/block.png"></div>\n',
  'escape.md': '[e](http://old\\.example.com/e) and [f](http://old.example.com/f)\n',
  'tab.md': '- [a](http://old.example.com/a)\tafter a tab\n\n\tcode http://old.example.com/not\n',
  'upper.css': '.a { background: URL(HTTP://OLD.EXAMPLE.COM/x.png) }\n@import url(https://old.example.com/i.css);\n',
  'none.md': '# nothing to move, [elsewhere](https://elsewhere.org/)\n',
};

async function proposed(files: Record<string, string>, to = TO): Promise<Map<string, string>> {
  const { changes } = await linkUpdater.propose(new Map(Object.entries(files)), { from_hosts: FROM, to_host: to }, { allFiles: new Set(Object.keys(files)), read: (rel) => files[rel], seed: 42 });
  return changes;
}

describe("the verifier's links after a host swap", () => {
  it('are exactly what a parse of the new text gives, for every file the adapter changed by swaps alone', async () => {
    const changes = await proposed(FILES);
    let swapped = 0;
    for (const [rel, after] of changes) {
      const before = FILES[rel]!;
      const derived = linksAfterHostSwap(before, parseLinks(rel, before), FROM, TO, after);
      if (derived) {
        swapped++;
        expect(derived, rel).toEqual(parseLinks(rel, after));
      }
    }
    // The adapter writes swaps alone here: no file is left to the parser.
    expect(changes.size).toBe(11);
    expect(swapped).toBe(changes.size);
  });

  it('answers null, so the file is parsed, for any other change', async () => {
    const rel = 'site/index.html';
    const before = FILES[rel]!;
    const links = parseLinks(rel, before);
    const honest = (await proposed({ [rel]: before })).get(rel)!;
    expect(linksAfterHostSwap(before, links, FROM, TO, honest)).not.toBeNull();
    // A byte changed outside the swaps: a link added, one removed, a comment opened, one link left.
    expect(linksAfterHostSwap(before, links, FROM, TO, honest.replace('</body>', '<a href="http://old.example.com/new">n</a></body>'))).toBeNull();
    expect(linksAfterHostSwap(before, links, FROM, TO, honest.replace('<a href="https://elsewhere.org/">elsewhere</a>', ''))).toBeNull();
    expect(linksAfterHostSwap(before, links, FROM, TO, honest.replace('<form', '<!-- <form'))).toBeNull();
    expect(linksAfterHostSwap(before, links, FROM, TO, honest.replace('https://new.example.com/search', 'http://old.example.com/search'))).toBeNull();
    // Another host put in than the one asked for.
    expect(linksAfterHostSwap(before, links, FROM, TO, honest.replaceAll('https://new.example.com', 'https://evil.example.com'))).toBeNull();
  });

  it('answers null for a new host with characters that can end or start something in the grammars', async () => {
    for (const to of ['https://new.example.com"x', 'https://new example.com', 'https://new.example.com/a,b', 'https://new.example.com)', 'https://new.example.com&amp;', 'https://new\\.example.com']) {
      const rel = 'site/docs/guide.md';
      const before = FILES[rel]!;
      const after = (await proposed({ [rel]: before }, to)).get(rel)!;
      expect(linksAfterHostSwap(before, parseLinks(rel, before), FROM, to, after), to).toBeNull();
    }
  });
});

describe('every spelling of a host swapped (the text a Markdown part is known by)', () => {
  it("is the adapter's text where each host is spelled only in a link, in any case, and another text where it is spelled elsewhere", async () => {
    const files: Record<string, string> = {
      'links.md': 'See [a](HTTP://Old.Example.com/a) and <https://old.example.com/b>.\n\n[r]: http://old.example.com\n',
      'prose.md': 'The old site was http://old.example.com, see [a](http://old.example.com/a).\n',
    };
    const changes = await proposed(files);
    expect(everyHostSwapped(files['links.md']!, FROM, TO)).toBe(changes.get('links.md'));
    expect(everyHostSwapped(files['prose.md']!, FROM, TO)).not.toBe(changes.get('prose.md'));
    expect(everyHostSwapped('no host here\n', FROM, TO)).toBe('no host here\n');
    expect(everyHostSwapped('a (x.y) b', ['http://x.y/'], TO)).toBe('a (x.y) b');
  });
});
