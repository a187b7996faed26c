import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Fixture repositories the DTA tests and the bench generate (real git, real files): one per
 * adapter, small enough to read in a failure message.
 */

export function gitIn(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'Fixture', GIT_AUTHOR_EMAIL: 'f@example.com', GIT_COMMITTER_NAME: 'Fixture', GIT_COMMITTER_EMAIL: 'f@example.com' } });
}

export function makeRepo(files: Record<string, string>, prefix = 'dta-fixture'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`)));
  // mkdtemp makes it 0700; a root server's runner (an unprivileged user) must be able to clone it.
  fs.chmodSync(dir, 0o755);
  writeFiles(dir, files);
  gitIn(dir, 'init', '-q', '-b', 'main');
  gitIn(dir, 'add', '-A');
  gitIn(dir, 'commit', '-q', '-m', 'fixture');
  return dir;
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
}

/** Every tracked file's bytes, for "byte-identical to before" assertions. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of gitIn(dir, 'ls-files', '-z', '--cached', '--others', '--exclude-standard').split('\0').filter(Boolean).sort()) {
    out[rel] = fs.readFileSync(path.join(dir, rel), 'base64');
  }
  return out;
}

export const SITE_FILES: Record<string, string> = {
  'site/index.html': `<!doctype html>
<html><head>
<meta http-equiv="refresh" content="30; url=http://old.example.com/home">
<link rel="stylesheet" href="https://old.example.com/style.css">
<style>body { background: url("http://old.example.com/bg.png") }</style>
</head><body>
<a href="http://old.example.com/about?x=1#team">About</a>
<a href="https://old.example.com.evil.net/">not ours</a>
<img src="https://old.example.com/logo.png" srcset="https://old.example.com/logo.png 1x, https://old.example.com/logo@2x.png 2x">
<form action="http://old.example.com/search"></form>
<!-- <a href="http://old.example.com/commented">a comment is not a link</a> -->
<div style="background-image: url(http://old.example.com/tile.png)"></div>
<a href="https://elsewhere.org/">elsewhere</a>
</body></html>
`,
  'site/docs/guide.md': `# Guide

See [the about page](http://old.example.com/about) and <https://old.example.com/contact>.
![logo](https://old.example.com/logo.png "Logo")

A [reference link][ref] and \`http://old.example.com/in-code\` in code.

    http://old.example.com/indented-code

[ref]: https://old.example.com/reference "Ref"
`,
  'site/css/site.css': `@import "http://old.example.com/base.css";
.hero { background: url('https://old.example.com/hero.jpg') no-repeat; }
/* url(http://old.example.com/comment.png) */
.x { content: "http://old.example.com/string"; }
`,
  'site/untouched.html': '<p><a href="https://new.example.com/already">already</a></p>\n',
  'README.md': 'Not in the glob: [old](http://old.example.com/readme)\n',
};

export const JSON_FILES: Record<string, string> = {
  'config/a.json': '{\n  "name": "a",\n  "port": "8080"\n}\n',
  'config/b.json': '{\n    "title": "b",\n    "port": 81\n}\n',
  'config/c.json': '{\n  "name": "c",\n  "port": 82,\n  "enabled": false\n}\n',
  'config/broken.json': '{\n  "port": [1, 2]\n}\n',
  'config/notjson.json': '{ not json\n',
};

export const JSON_SCHEMA = {
  type: 'object',
  required: ['name', 'port', 'enabled'],
  additionalProperties: false,
  properties: { name: { type: 'string' }, port: { type: 'integer' }, enabled: { type: 'boolean', default: true } },
};

export const TS_FILES: Record<string, string> = {
  'src/math.ts': 'export function addNumbers(a: number, b: number): number {\n  return a + b;\n}\n',
  'src/main.ts': "import { addNumbers } from './math';\n\n// addNumbers is documented here\nconst label = 'addNumbers';\nexport const total = addNumbers(1, 2) + addNumbers(3, 4);\nexport { label };\n",
  'src/other.js': "const addNumbers = (x) => x; // a different symbol with the same name\nmodule.exports = { addNumbers };\n",
};

/** Docs after a move: guide.md went to handbook/guide.md, img/ to assets/img/. */
export const DOC_FILES_BEFORE: Record<string, string> = {
  'docs/index.md': '# Index\n\nRead [the guide](guide.md#install) and [setup](./setup.md).\n\n![diagram](img/diagram.png)\n\n[ref]: guide.md\n',
  'docs/guide.md': '# Guide\n\n## Install\n\nBack to [index](index.md). See [setup](setup.md#usage).\n',
  'docs/setup.md': '# Setup\n\n## Usage\n\nUse it.\n',
  'docs/img/diagram.png': 'PNG',
  'docs/broken.md': 'Nothing here: [gone](never-existed.md)\n',
};

export function movedDocsRepo(): string {
  const dir = makeRepo(DOC_FILES_BEFORE, 'dta-docs');
  fs.mkdirSync(path.join(dir, 'docs/handbook'));
  fs.mkdirSync(path.join(dir, 'docs/assets'));
  gitIn(dir, 'mv', 'docs/guide.md', 'docs/handbook/guide.md');
  gitIn(dir, 'mv', 'docs/img', 'docs/assets/img');
  gitIn(dir, 'rm', '-q', 'docs/broken.md');
  gitIn(dir, 'commit', '-q', '-m', 'move docs');
  return dir;
}
