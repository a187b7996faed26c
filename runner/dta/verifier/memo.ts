import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FoundLink, LinkStore } from '../adapters/link-updater/links';
import { sameStat, statOf, type FileStat } from '../file-stat';

/** Bump by hand for a change the parser versions and parsers.ts cannot show (the memo's own format). */
export const VERIFIER_MEMO_FORMAT = 2;
/** The packages whose answers the memo keeps: another version of any of them may find other links. */
const PARSER_PACKAGES = ['parse5', 'parse5-sax-parser', 'htmlparser2', 'markdown-it', 'micromark', 'micromark-util-decode-string', 'css-tree'];
/** The file name inside the memo folder the runner gives (its data folder, never a repository). */
export const VERIFIER_MEMO_FILE = 'verifier-memo.json';
/** Entries kept (a few links each, ~100 bytes): a 5,000-file site before and after fits many times. */
export const VERIFIER_MEMO_MAX_ENTRIES = 100_000;

/**
 * What the memo's answers depend on: its format, the parser packages' versions and the source of
 * our parsers (parsers.ts). Any change to them is another version, so an entry parsed by other
 * code is never trusted — no one has to remember to bump a number.
 */
function computeVersion(): string {
  const h = crypto.createHash('sha256').update(`format ${VERIFIER_MEMO_FORMAT}\0`);
  const require = createRequire(import.meta.url);
  for (const name of PARSER_PACKAGES) {
    let version = 'unknown';
    try {
      version = (JSON.parse(fs.readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;
    } catch {
      // A package that hides its package.json still changes the source hash below when it moves.
    }
    h.update(`${name}@${version}\0`);
  }
  h.update(parsersSha256());
  return h.digest('base64url').slice(0, 22);
}
/** The sha256 of parsers.ts as bundled, set only in the verifier's prebuilt bundle (verifier/bundle.ts). */
declare const __AV_DTA_PARSERS_SHA256__: string | undefined;

/** The hash of our parsers' source (both HTML readers' included): the bundle's (where the .ts is not beside it), else the files' (bundle.ts hashes the same files in the same order). */
function parsersSha256(): string {
  if (typeof __AV_DTA_PARSERS_SHA256__ === 'string') return __AV_DTA_PARSERS_SHA256__;
  const h = crypto.createHash('sha256');
  for (const file of ['parsers.ts', 'html-htmlparser2.ts', 'markdown-markdown-it.ts']) h.update(fs.readFileSync(new URL(`../adapters/link-updater/${file}`, import.meta.url)));
  return h.digest('hex');
}

let version: string | null = null;
export function verifierMemoVersion(): string {
  version ??= computeVersion();
  return version;
}

function statOrNull(file: string): FileStat | null {
  try {
    return statOf(file);
  } catch {
    return null;
  }
}

/**
 * The verifier's own memo of parsed links by content: sha256 of (verifier version, kind, text) → the links.
 * Only the verifier writes it, and only with what it parsed itself; identical bytes parse to the
 * same links, so a later run (the apply after its dry-run) re-measures the same texts without
 * parsing them again — "before" is the same HEAD, and "after" is what the dry-run's patch produced.
 * Nothing of the adapter's reaches it. It lives in the folder the runner names (its own data folder,
 * which sessions never see: README "Threat model"), 0700/0600 — never in a repository's git dir,
 * where a session with write access could forge what a later verifier would take as parsed.
 */
export class VerifierMemo implements LinkStore {
  /** What earlier processes parsed (read at open) and what this one took from it, by key; most recently used last. */
  private readonly entries = new Map<string, FoundLink[]>();
  /**
   * What this process's parsers found, keyed only when saved: a key is a sha256 of the whole text,
   * and a first run (an empty memo, nothing to look up) hashed every text it parsed while its
   * dry-run waited for it.
   */
  private fresh: Array<[kind: string, text: string, links: FoundLink[]]> = [];
  private dirty = false;
  /** Asked or told anything yet (an outdated memo is read again only before that). */
  private used = false;

  private constructor(
    private readonly file: string,
    /** The file's stat before it was read (null: there was none). */
    private readonly seen: FileStat | null,
  ) {}

  static open(file: string): VerifierMemo {
    const seen = statOrNull(file);
    let text: string | null = null;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      // No memo yet: start empty.
    }
    return VerifierMemo.from(file, seen, text);
  }

  /** open(), its file read without blocking (a verifier preloading its memo still takes requests meanwhile). */
  static async read(file: string): Promise<VerifierMemo> {
    const seen = statOrNull(file);
    const text = await fs.promises.readFile(file, 'utf8').catch(() => null);
    return VerifierMemo.from(file, seen, text);
  }

  private static from(file: string, seen: FileStat | null, text: string | null): VerifierMemo {
    const memo = new VerifierMemo(file, seen);
    if (text === null) return memo;
    try {
      const saved = JSON.parse(text) as { version?: string; entries?: Array<[string, FoundLink[]]> };
      if (saved.version === verifierMemoVersion() && Array.isArray(saved.entries)) for (const [k, v] of saved.entries) memo.entries.set(k, v);
    } catch {
      // An unreadable memo: start empty (it only ever saves work).
    }
    return memo;
  }

  /**
   * Whether another process saved the memo since this one read it (each save is a new file: a new
   * inode), and this one has not used it yet: read early (a spare verifier), it may miss the runs
   * that ended since.
   */
  outdated(): boolean {
    if (this.used) return false;
    const now = statOrNull(this.file);
    return now === null || this.seen === null ? now !== this.seen : !sameStat(now, this.seen);
  }

  private key(kind: string, text: string): string {
    return crypto.createHash('sha256').update(`${verifierMemoVersion()}\0${kind}\0`).update(text).digest('base64url');
  }

  get(kind: string, text: string): FoundLink[] | undefined {
    this.used = true;
    // Nothing read at open: nothing to find (what this process parsed, its own cache answers).
    if (this.entries.size === 0) return undefined;
    const key = this.key(kind, text);
    const hit = this.entries.get(key);
    if (hit) {
      // Most recently used last: the oldest are dropped first when the memo is full.
      this.entries.delete(key);
      this.entries.set(key, hit);
      this.dirty = true;
    }
    return hit;
  }

  set(kind: string, text: string, links: FoundLink[]): void {
    this.used = true;
    this.fresh.push([kind, text, links]);
    this.dirty = true;
  }

  /** Temp + rename, so a verifier killed mid-write leaves the old memo. */
  save(): void {
    if (!this.dirty) return;
    for (const [kind, text, links] of this.fresh) {
      const key = this.key(kind, text);
      this.entries.delete(key);
      this.entries.set(key, links);
    }
    this.fresh = [];
    const all = [...this.entries];
    const kept = all.slice(Math.max(0, all.length - VERIFIER_MEMO_MAX_ENTRIES));
    fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify({ version: verifierMemoVersion(), entries: kept }), { mode: 0o600 });
    fs.renameSync(tmp, this.file);
    this.dirty = false;
  }
}
