import fs from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { runDta } from '../../engine';
import { makeRepo } from '../../testing/fixture-repos';
import { hostBytesMatcher } from '../../verifier/host-bytes';
import { mayLinkTo, targetedHost } from './measure';
import { parseLinks } from './parsers';

// The end-to-end case starts a verifier process (tsx); a loaded 2-core machine needs time.
vi.setConfig({ testTimeout: 180_000 });

const HOSTS = ['http://old.example.com', 'https://old.example.com'];
const LINKS = { from_hosts: HOSTS, to_host: 'https://new.example.com' };

/**
 * Files whose bytes spell a link to the old host some other way than plainly. What the parsers
 * count as a link to the host is the rule, compared lowercased: Markdown destinations decoded
 * (backslash escapes, character references); HTML attributes and CSS as written in the source
 * (so `old&#46;example.com` in an href is not the host to them, and a prefilter may skip it — it
 * parses such files anyway, for the `&`). Percent-encoding is decoded by none of them, so
 * `old%2Eexample.com` is another host to the parsers, and to both prefilters.
 */
const SPELLED: Record<string, string> = {
  'entity-dot.html': '<a href="http://old&#46;example.com/a">a</a>\n',
  'entity-named.html': '<a href="http&colon;//old.example.com/b">b</a>\n',
  'entity-hex.html': '<img src="https://old&#x2e;example&#x2E;com/c.png">\n',
  'upper.html': '<a href="HTTP://OLD.EXAMPLE.COM/d">d</a>\n',
  'escape.md': '[e](http://old\\.example.com/e)\n',
  'entity.md': '[f](https://old&period;example.com/f)\n',
  'html-in.md': 'text <a href="http://old&#46;example.com/g">g</a>\n',
  'css-escape.css': '.x { background: url("http://old\\2e example.com/h.png"); }\n',
  'kelvin.html': '<a href="http://old.example.com/\u212a">k</a> <a href="https://\u212aold.example.com/">not the host</a>\n',
  'percent.html': '<a href="http://old%2Eexample.com/i">not the host to the parsers</a>\n',
  'plain.md': '[j](https://old.example.com/j)\n',
  'other.html': '<a href="https://elsewhere.org/">x</a> <a href="https://new.example.com/y">y</a>\n',
};

describe('the prefilter before the parsers', () => {
  const verifierSays = hostBytesMatcher(HOSTS);

  it('never skips a file the parsers find a link to the old host in, and both prefilters (adapter, verifier) give the same answer', () => {
    const targeted: string[] = [];
    for (const [rel, text] of Object.entries(SPELLED)) {
      const hit = parseLinks(rel, text).some((l) => targetedHost(l.url, HOSTS) !== null);
      if (hit) targeted.push(rel);
      if (hit) expect({ rel, adapter: mayLinkTo(text, HOSTS), verifier: verifierSays(text) }).toEqual({ rel, adapter: true, verifier: true });
      expect({ rel, same: mayLinkTo(text, HOSTS) }).toEqual({ rel, same: verifierSays(text) });
    }
    // Markdown's escapes are decoded (a plain byte search would miss those two), case is folded.
    expect(targeted.sort()).toEqual(['entity.md', 'escape.md', 'kelvin.html', 'plain.md', 'upper.html']);
    // …and a file with neither the host nor an escape is skipped by both.
    expect(mayLinkTo(SPELLED['other.html'], HOSTS)).toBe(false);
    expect(verifierSays(SPELLED['percent.html'])).toBe(false);
  });

  it("matches the host as the lowercased text's includes would, without lowercasing the text", () => {
    // The definition the compiled prefilter stands for: an escape, or the lowercased text contains a lowercased prefix.
    const byLowercase = (text: string) => /[&\\\u212a\u0130]/.test(text) || HOSTS.some((h) => text.toLowerCase().includes(h.toLowerCase()));
    // Letters whose case folds oddly (long s, dotless i, Kelvin, dotted I, sharp s, final sigma) around the host, in every case.
    const odd = ['', 'ſ', 'ı', '\u212a', '\u0130', 'ß', 'Σ', 'é', '&', '\\', '%2E'];
    const spellings = ['http://old.example.com', 'HTTP://OLD.EXAMPLE.COM', 'hTtPs://oLd.ExAmPlE.cOm', 'http://old.examplE.Com', 'http://old-example.com', 'http://old.exampl\u212a.com', 'https://old.exam\u0130ple.com', 'http://oLd.example.co'];
    const texts = spellings.flatMap((s) => odd.flatMap((a) => odd.map((b) => `${a}<a href="${s}/x">${b}</a>`)));
    for (const text of texts) expect({ text, prefilter: mayLinkTo(text, HOSTS) }).toEqual({ text, prefilter: byLowercase(text) });
    expect(texts.filter((t) => !mayLinkTo(t, HOSTS)).length).toBeGreaterThan(20);
  });

  it('a host written with non-ASCII letters is always parsed for', () => {
    expect(mayLinkTo('nothing here', ['http://bücher.example'])).toBe(true);
    expect(hostBytesMatcher(['http://bücher.example'])('nothing here')).toBe(true);
  });
});

describe('link_updater with the prefilter, end to end', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  it('counts the links written with escapes (they are not skipped), parses only the files that can hold one, and its verifier agrees', async () => {
    const dir = makeRepo(Object.fromEntries(Object.entries(SPELLED).map(([rel, text]) => [`site/${rel}`, text])));
    dirs.push(dir);
    const dry = await runDta({ tool: 'link_updater', version: '1.0', mode: 'dry-run', target: { repo_path: dir, glob: 'site/**' }, params: LINKS });
    // other.html and percent.html hold neither the host's bytes nor an escape: not parsed.
    expect(dry.baseline).toMatchObject({ files_scanned: 12, files_parsed: 10 });
    // Every link the parsers see to the old host counts, the escaped Markdown ones included.
    expect(dry.baseline.links_to_update).toBe(5);
    // Only the plainly written ones can be rewritten; the escaped ones are left with a note, and
    // the verifier — counting with its own selection — finds exactly those still there.
    expect(dry.proposed_changes).toEqual({ files: 3, link_updates: 3 });
    expect(dry.notes.join('\n')).toMatch(/escape\.md@\d+: .* is written with escapes/);
    expect(dry.notes.join('\n')).toMatch(/entity\.md@\d+: .* is written with escapes/);
    expect(dry.verifier.failures.join('\n')).not.toMatch(/baseline does not match/);
    expect(dry.verifier.failures).toEqual(['links_to_update is 2 after, not 0']);
  });
});
