import { Node, Project, SyntaxKind, ts, type Identifier } from 'ts-morph';
import type { DtaCounts } from '../../../protocol/dta';
import { DTA_PARAMS_SCHEMAS, DTA_SUMMARIES } from '../../../protocol/dta-params';
import { byteCompare } from '../git-state';
import type { Adapter, Files, Measure } from '../types';

/**
 * rename_refactor: renames one TypeScript/JavaScript symbol through the language service (the
 * AST and its references, never text: a string or a comment with the name stays as it is).
 * Counted and verified by re-parsing: identifiers named `from` go down by exactly the renamed
 * occurrences, identifiers named `to` go up by the same, and no file gains a syntax error.
 */
export interface RenameRefactorParams {
  from: string;
  to: string;
  /** The file that declares the symbol, when the name is declared in more than one. */
  declared_in?: string;
}

const COMPILER_OPTIONS = { allowJs: true, checkJs: false, jsx: ts.JsxEmit.Preserve, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, noEmit: true };

function scriptKind(rel: string): ts.ScriptKind {
  if (rel.endsWith('.tsx')) return ts.ScriptKind.TSX;
  if (rel.endsWith('.jsx')) return ts.ScriptKind.JSX;
  if (/\.[cm]?js$/.test(rel)) return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}

/** Identifier counts straight from the parser (no program, no type checking): fast on big trees. */
function countIdentifiers(rel: string, text: string, names: string[]): { counts: number[]; syntaxErrors: number } {
  const sf = ts.createSourceFile(rel, text, ts.ScriptTarget.ES2022, true, scriptKind(rel));
  const counts = names.map(() => 0);
  const visit = (n: ts.Node) => {
    if (ts.isIdentifier(n) || ts.isPrivateIdentifier(n) || n.kind === SyntaxKind.JsxNamespacedName) {
      const i = names.indexOf(n.getText(sf));
      if (i >= 0) counts[i]++;
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  const parseDiagnostics = (sf as unknown as { parseDiagnostics?: unknown[] }).parseDiagnostics ?? [];
  return { counts, syntaxErrors: parseDiagnostics.length };
}

export const renameRefactorMeasure: Measure<RenameRefactorParams> = {
  tool: 'rename_refactor',
  unit: 'occurrences_renamed',
  defaultGlob: ['**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs}'],
  paramsSchema: DTA_PARAMS_SCHEMAS.rename_refactor,
  async measure(files: Files, params): Promise<DtaCounts> {
    let occurrences_from = 0;
    let occurrences_to = 0;
    let syntax_errors = 0;
    for (const [rel, text] of files) {
      const r = countIdentifiers(rel, text, [params.from, params.to]);
      occurrences_from += r.counts[0];
      occurrences_to += r.counts[1];
      syntax_errors += r.syntaxErrors;
    }
    return { files_scanned: files.size, occurrences_from, occurrences_to, syntax_errors };
  },
  check(before, after, claimed) {
    const failures: string[] = [];
    const gone = before.occurrences_from - after.occurrences_from;
    const came = after.occurrences_to - before.occurrences_to;
    if (gone !== claimed) failures.push(`the run claims ${claimed} occurrences renamed, the parser finds ${gone} fewer \`from\``);
    if (came !== gone) failures.push(`\`from\` went down by ${gone} but \`to\` went up by ${came}`);
    if (after.syntax_errors > before.syntax_errors) failures.push(`syntax errors went from ${before.syntax_errors} to ${after.syntax_errors}`);
    return { checks: ['reparsed', 'counts_match', 'no_new_syntax_errors'], failures };
  },
};

function declarationName(id: Identifier): boolean {
  const parent = id.getParent();
  return parent !== undefined && Node.hasName(parent) && parent.getNameNode() === id;
}

export const renameRefactor: Adapter<RenameRefactorParams> = {
  measure: renameRefactorMeasure,
  summary: DTA_SUMMARIES.rename_refactor,
  domain: renameRefactorMeasure.defaultGlob,
  async propose(files, params) {
    if (params.from === params.to) return { changes: new Map(), units: 0, notes: ['from and to are the same name'] };
    const project = new Project({ useInMemoryFileSystem: true, compilerOptions: COMPILER_OPTIONS, skipAddingFilesFromTsConfig: true });
    for (const [rel, text] of files) project.createSourceFile(`/${rel}`, text, { overwrite: true, scriptKind: scriptKind(rel) });
    const decls = project
      .getSourceFiles()
      .filter((sf) => !params.declared_in || sf.getFilePath() === `/${params.declared_in}`)
      .sort((a, b) => byteCompare(a.getFilePath(), b.getFilePath()))
      .flatMap((sf) => sf.getDescendantsOfKind(SyntaxKind.Identifier).filter((id) => id.getText() === params.from && declarationName(id)));
    const symbols = new Map<unknown, Identifier>();
    for (const d of decls) {
      const s = d.getSymbol();
      if (s && !symbols.has(s)) symbols.set(s, d);
    }
    if (symbols.size === 0) throw new Error(`no declaration of ${params.from}${params.declared_in ? ` in ${params.declared_in}` : ''}`);
    if (symbols.size > 1) {
      const where = [...new Set([...symbols.values()].map((d) => d.getSourceFile().getFilePath().slice(1)))].join(', ');
      throw new Error(`${params.from} is declared more than once (${where}); say which with declared_in`);
    }
    const decl = [...symbols.values()][0];
    decl.rename(params.to, { renameInComments: false, renameInStrings: false, usePrefixAndSuffixText: false });
    const changes = new Map<string, string>();
    for (const sf of project.getSourceFiles()) {
      const rel = sf.getFilePath().slice(1);
      const text = sf.getFullText();
      if (text !== files.get(rel)) changes.set(rel, text);
    }
    let units = 0;
    for (const [rel, text] of changes) {
      const before = countIdentifiers(rel, files.get(rel)!, [params.from, params.to]).counts;
      if (before[1] > 0) throw new Error(`${rel} already uses the name ${params.to}; renaming would collide`);
      units += before[0] - countIdentifiers(rel, text, [params.from]).counts[0];
    }
    return { changes, units, notes: [] };
  },
};
