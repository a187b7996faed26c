import { parse as micromarkParse, postprocess, preprocess } from 'micromark';
import { describe, expect, it } from 'vitest';
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
