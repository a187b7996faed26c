import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractLinks, useLinkStore } from '../adapters/link-updater/links';
import { VerifierMemo } from './memo';

describe("the verifier's memo of parsed links", () => {
  it('a later verifier process reads what an earlier one parsed, by content; another text or another memo version is parsed afresh', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memo-'));
    const file = path.join(dir, 'memo.json');
    const first = VerifierMemo.open(file);
    useLinkStore(first);
    const text = '[a](http://old.example.com/memo-1)\n';
    const links = extractLinks('docs/a.md', text);
    useLinkStore(null);
    first.save();

    const second = VerifierMemo.open(file);
    expect(second.get(second.key('markdown', text))).toEqual(links);
    expect(second.get(second.key('markdown', `${text} `))).toBeUndefined();
    expect(second.get(second.key('html', text))).toBeUndefined();

    // A memo written by another version is ignored (its parsers may have answered differently).
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { version: number };
    fs.writeFileSync(file, JSON.stringify({ ...saved, version: saved.version + 1 }));
    const third = VerifierMemo.open(file);
    expect(third.get(third.key('markdown', text))).toBeUndefined();
    // An unreadable memo is an empty one.
    fs.writeFileSync(file, '{not json');
    expect(VerifierMemo.open(file).get(third.key('markdown', text))).toBeUndefined();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
