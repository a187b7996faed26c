import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { sameStat, statOf, type FileStat } from '../file-stat';

/**
 * The verifier's prebuilt JavaScript entry. Started through tsx, every verifier process paid
 * ~0.5–1 s of CPU (tsx's loader thread, esbuild transforming each TypeScript file, the hooks'
 * round trips) before it measured anything; bundled with esbuild (our code and the packages it
 * starts with in, other npm packages left to node_modules), node loads it directly.
 *
 * Never stale: a bundle sits in a folder named by the hash of the exact bytes it was built from
 * (every file esbuild read, this file with the build's options among them), and the manifest lists
 * those files. Before each verifier starts, our listed sources are hashed again (~50 files, a few
 * ms) and the bundled packages' files (and their package.json) stat'ed (FileStat): any change — an
 * edit, a new import, a removed file, a package reinstalled — means "not fresh", and the verifier
 * runs through tsx from the sources while a new bundle is built for the next one.
 */

/** The project's root (this file is runner/dta/verifier/bundle.ts). */
const PROJECT = fileURLToPath(new URL('../../../', import.meta.url));
/** Bundles live in the install's cache folder (ignored by git with the rest of node_modules). */
export const DEFAULT_BUNDLE_CACHE = path.join(PROJECT, 'node_modules', '.cache', 'av-dta-verifier');
/** The process's entry and the parser threads' (parse-pool.ts picks it inside a bundle). */
const ENTRY_POINTS = { main: 'runner/dta/verifier/main.ts', 'parse-worker': 'runner/dta/adapters/link-updater/parse-worker.ts' };
/** The parsers whose source the memo's version names (memo.ts): hashed into the bundle as a constant, in this order. */
const PARSERS_SOURCES = ['runner/dta/adapters/link-updater/parsers.ts', 'runner/dta/adapters/link-updater/html-htmlparser2.ts', 'runner/dta/adapters/link-updater/markdown-markdown-it.ts'];
/**
 * npm packages bundled in: the verifier's start and link_updater's parsers. Loaded as node's ES
 * module loader loads node_modules (each file resolved, read and linked on its own), they were
 * ~0.2 s of CPU at every verifier start on this machine; inside the bundle, ~0.03 s. Their bytes
 * are in the bundle's key like ours. Any other package (ts-morph and the TypeScript compiler,
 * ajv: megabytes that only other tools' chunks load) stays in node_modules, resolved at run time.
 */
const BUNDLED_PACKAGES = new Set(['zod', 'picomatch', 'diff', 'htmlparser2', 'markdown-it', 'css-tree', 'parse5', 'parse5-sax-parser', 'micromark', 'micromark-util-decode-string']);

/** The package a bare import names (`@scope/name` or `name`, without a subpath). */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** One manifest per source tree: two checkouts sharing an install (a symlinked node_modules) do not rebuild each other's. */
function manifestName(project: string): string {
  return `manifest-${crypto.createHash('sha256').update(path.resolve(project)).digest('hex').slice(0, 16)}.json`;
}
/** This file, with the build's options: part of every bundle's key. */
const SELF = path.relative(PROJECT, fileURLToPath(import.meta.url));
/** Readable by every user (what is inside is the project's own code, as readable as its sources). */
const BUNDLE_DIR_MODE = 0o755;
/** Older bundles are removed at the next build after this long (a verifier still running from one loaded it long before). */
export const OLD_BUNDLE_MAX_AGE_MS = 60 * 60_000;

interface Manifest {
  /** The hash of every byte the bundle was built from (its folder's name). */
  key: string;
  /** Our source files the bundle was built from, relative to the project. */
  inputs: string[];
  /** The hash of those sources' bytes, checked again before each start. */
  sourcesKey: string;
  /** The bundled packages' files, each with its stat as it was before the build read it. */
  packageFiles: Array<[string, ...FileStat]>;
}

/*
 * A package file's stat (file-stat.ts) stands for its bytes: 400 files (2.9 MB) of bundled
 * packages would be ~30 ms to hash again before every start; their stats are a few ms. The stat is
 * taken before the build reads the file, so a change during the build shows too.
 */

function isPackageFile(rel: string): boolean {
  return rel.split(path.sep).includes('node_modules');
}

/** The package.json of the package a file is in (what resolution read: its `exports`, `main`). */
function packageJsonOf(rel: string): string {
  const parts = rel.split(path.sep);
  const at = parts.lastIndexOf('node_modules');
  return [...parts.slice(0, at + (parts[at + 1]?.startsWith('@') ? 3 : 2)), 'package.json'].join(path.sep);
}

export interface BundleOptions {
  /** Where bundles go (tests use a folder of their own). */
  cacheDir?: string;
  /** The tree whose sources are bundled (tests use a copy they may edit). */
  project?: string;
}

function bundleKey(inputs: Iterable<[string, Buffer]>): string {
  const h = crypto.createHash('sha256');
  for (const [rel, bytes] of [...inputs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) h.update(rel).update('\0').update(bytes).update('\0');
  return h.digest('hex').slice(0, 32);
}

/** The bundle's entry when one was built from the sources exactly as they are now; null otherwise. */
export function freshBundle(opts: BundleOptions = {}): string | null {
  const cacheDir = opts.cacheDir ?? DEFAULT_BUNDLE_CACHE;
  const project = opts.project ?? PROJECT;
  try {
    const m = JSON.parse(fs.readFileSync(path.join(cacheDir, manifestName(project)), 'utf8')) as Manifest;
    if (!Array.isArray(m.inputs) || !m.inputs.includes(SELF) || !Array.isArray(m.packageFiles)) return null;
    if (bundleKey(m.inputs.map((rel) => [rel, fs.readFileSync(path.join(project, rel))])) !== m.sourcesKey) return null;
    for (const [rel, ...was] of m.packageFiles) if (!sameStat(statOf(path.join(project, rel)), was)) return null;
    const main = path.join(cacheDir, m.key, 'main.mjs');
    return fs.existsSync(main) ? main : null;
  } catch {
    // No manifest yet, or a listed source is gone: not fresh.
    return null;
  }
}

/**
 * Builds the bundle from the sources as they are now and returns its entry. Each source is read
 * once, and those very bytes are both bundled and hashed, so the folder's name is the code inside.
 */
export async function buildVerifierBundle(opts: BundleOptions = {}): Promise<string> {
  const cacheDir = opts.cacheDir ?? DEFAULT_BUNDLE_CACHE;
  const project = opts.project ?? PROJECT;
  const { build } = await import('esbuild');
  const read = new Map<string, Buffer>();
  const packageStats = new Map<string, FileStat>();
  const bytesOf = (rel: string): Buffer => {
    let b = read.get(rel);
    if (!b) {
      if (isPackageFile(rel)) {
        packageStats.set(rel, statOf(path.join(project, rel)));
        const manifest = packageJsonOf(rel);
        if (!packageStats.has(manifest)) packageStats.set(manifest, statOf(path.join(project, manifest)));
      }
      read.set(rel, (b = fs.readFileSync(path.join(project, rel))));
    }
    return b;
  };
  bytesOf(SELF);
  const parsersHash = crypto.createHash('sha256');
  for (const rel of PARSERS_SOURCES) parsersHash.update(bytesOf(rel));
  const parsersSha256 = parsersHash.digest('hex');
  const sameBytes: Plugin = {
    name: 'av-same-bytes',
    setup(b) {
      // A package our code imports is bundled only if listed; what a bundled package imports is bundled with it.
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith('node:') || args.importer.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        return BUNDLED_PACKAGES.has(packageOf(args.path)) ? undefined : { path: args.path, external: true };
      });
      b.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
        const rel = path.relative(project, args.path);
        return { contents: bytesOf(rel), loader: /\.[cm]?ts$/.test(rel) ? 'ts' : 'js' };
      });
      b.onLoad({ filter: /\.json$/ }, (args) => ({ contents: bytesOf(path.relative(project, args.path)), loader: 'json' }));
    },
  };
  fs.mkdirSync(cacheDir, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(cacheDir, 'build-'));
  try {
    await build({
      absWorkingDir: project,
      entryPoints: ENTRY_POINTS,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      // One chunk per lazily loaded adapter (measures.ts), as the sources load them.
      splitting: true,
      // CommonJS packages inside an ES module still call require() for node's own modules.
      banner: { js: "import { createRequire as __avCreateRequire } from 'node:module'; const require = __avCreateRequire(import.meta.url);" },
      outdir: tmp,
      outExtension: { '.js': '.mjs' },
      define: { __AV_DTA_BUNDLE__: 'true', __AV_DTA_PARSERS_SHA256__: JSON.stringify(parsersSha256) },
      plugins: [sameBytes],
      logLevel: 'silent',
    });
    const key = bundleKey(read);
    const dir = path.join(cacheDir, key);
    try {
      fs.renameSync(tmp, dir);
    } catch {
      // Built already (another process, the same bytes): keep that one.
      fs.rmSync(tmp, { recursive: true, force: true });
    }
    // mkdtemp made it 0700: a runner under another uid (or in a user namespace) must be able to
    // read a bundle that `npm run build` made as root, else it finds none and cannot build one.
    fs.chmodSync(dir, BUNDLE_DIR_MODE);
    const manifest = manifestName(project);
    const manifestTmp = path.join(cacheDir, `${manifest}.${process.pid}.tmp`);
    const sources = [...read].filter(([rel]) => !isPackageFile(rel));
    const manifest_: Manifest = {
      key,
      inputs: sources.map(([rel]) => rel).sort(),
      sourcesKey: bundleKey(sources),
      packageFiles: [...packageStats].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([rel, st]) => [rel, ...st]),
    };
    fs.writeFileSync(manifestTmp, JSON.stringify(manifest_));
    fs.renameSync(manifestTmp, path.join(cacheDir, manifest));
    removeOldBundles(cacheDir, key);
    return path.join(dir, 'main.mjs');
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

function removeOldBundles(cacheDir: string, keep: string): void {
  for (const name of fs.readdirSync(cacheDir)) {
    if (name === keep || name.startsWith('manifest-')) continue;
    const p = path.join(cacheDir, name);
    try {
      if (Date.now() - fs.statSync(p).mtimeMs > OLD_BUNDLE_MAX_AGE_MS) fs.rmSync(p, { recursive: true, force: true });
    } catch {
      // removed by another process meanwhile
    }
  }
}

let building: Promise<string | null> | null = null;
let warned = false;

/**
 * The fresh bundle's entry, built first if there is none. Never throws: a failed build (no
 * esbuild, a read-only install) leaves the verifier on tsx, said once on stderr.
 */
export function ensureVerifierBundle(): Promise<string | null> {
  const fresh = freshBundle();
  if (fresh) return Promise.resolve(fresh);
  building ??= buildVerifierBundle()
    .catch((err: unknown) => {
      if (!warned) process.stderr.write(`av-dta: the verifier's prebuilt entry could not be built (${err instanceof Error ? err.message : String(err)}); it runs through tsx\n`);
      warned = true;
      return null;
    })
    .finally(() => {
      building = null;
    });
  return building;
}
