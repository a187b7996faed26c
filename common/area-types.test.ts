import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The per-area TypeScript settings hold: a component that reaches for Node, or a leaf that reaches
 * for Node or the DOM, does not type-check. Each probe is type-checked with the area's real
 * tsconfig (the same options CI's `tsc -p` uses), as if it were a file in that folder.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function diagnosticsOf(tsconfig: string, probePath: string, source: string): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(root, tsconfig), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  });
  if (!parsed) throw new Error(`cannot read ${tsconfig}`);
  const file = join(root, probePath);
  const host = ts.createCompilerHost(parsed.options);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (f) => (f === file ? source : readFile(f));
  host.fileExists = (f) => f === file || fileExists(f);
  host.getSourceFile = (f, lang, ...rest) => (f === file ? ts.createSourceFile(f, source, lang) : getSourceFile(f, lang, ...rest));
  // The area's own ambient declarations (types/browser, types/leaf) come with the probe.
  const ambient = parsed.fileNames.filter((f) => f.endsWith('.d.ts'));
  const program = ts.createProgram({ rootNames: [...ambient, file], options: { ...parsed.options, noEmit: true, incremental: false }, host });
  return ts
    .getPreEmitDiagnostics(program, program.getSourceFile(file))
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

const NODE_USE = "import { readFileSync } from 'node:fs';\nexport const a = readFileSync;\nexport const b = process.pid;\nexport const c = Buffer.from('x');\n";
const DOM_USE = "export const d = document.title;\nexport const w = window.innerWidth;\n";
const UNIVERSAL = "export const e = new TextEncoder().encode(btoa('x'));\nexport const n: number = [1, 2].at(-1) ?? 0;\n";

describe('per-area TypeScript settings', () => {
  it('browser code cannot use Node APIs, and may use the DOM and public env', () => {
    const errors = diagnosticsOf('tsconfig.browser.json', 'components/ui/__probe__.ts', NODE_USE);
    expect(errors.join('\n')).toMatch(/Cannot find module 'node:fs'/);
    expect(errors.join('\n')).toMatch(/Cannot find name 'process'|Property 'pid' does not exist/);
    expect(errors.join('\n')).toMatch(/Cannot find name 'Buffer'/);
    expect(diagnosticsOf('tsconfig.browser.json', 'components/ui/__probe__.ts', `${DOM_USE}export const f = process.env.NEXT_PUBLIC_AV_TEST_HOOKS;\n`)).toEqual([]);
  }, 60_000);

  it('the leaves can use neither Node nor the DOM, only what both have', () => {
    for (const leaf of ['protocol/__probe__.ts', 'common/__probe__.ts']) {
      expect(diagnosticsOf('tsconfig.leaf.json', leaf, NODE_USE).join('\n')).toMatch(/Cannot find module 'node:fs'/);
      const dom = diagnosticsOf('tsconfig.leaf.json', leaf, DOM_USE).join('\n');
      expect(dom).toMatch(/Cannot find name 'document'/);
      expect(dom).toMatch(/Cannot find name 'window'/);
      expect(diagnosticsOf('tsconfig.leaf.json', leaf, UNIVERSAL)).toEqual([]);
    }
  }, 60_000);
});
