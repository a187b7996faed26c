import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FoundLink, LinkStore } from '../adapters/link-updater/links';

/** Bump when a parser's answer for the same text changes (a new parser version, a new link kind). */
export const VERIFIER_MEMO_VERSION = 1;
/** Entries kept (a few links each, ~100 bytes): a 5,000-file site before and after fits many times. */
export const VERIFIER_MEMO_MAX_ENTRIES = 100_000;

/**
 * The verifier's own memo of parsed links by content: sha256 of (version, kind, text) → the links.
 * Only the verifier writes it, and only with what it parsed itself; identical bytes parse to the
 * same links, so a later run (the apply after its dry-run) re-measures the same texts without
 * parsing them again — "before" is the same HEAD, and "after" is what the dry-run's patch produced.
 * Nothing of the adapter's reaches it. Kept in the repository's git dir, beside the rate-limit state.
 */
export class VerifierMemo implements LinkStore {
  private readonly entries = new Map<string, FoundLink[]>();
  private dirty = false;

  private constructor(private readonly file: string) {}

  static open(file: string): VerifierMemo {
    const memo = new VerifierMemo(file);
    try {
      const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: number; entries?: Array<[string, FoundLink[]]> };
      if (saved.version === VERIFIER_MEMO_VERSION && Array.isArray(saved.entries)) for (const [k, v] of saved.entries) memo.entries.set(k, v);
    } catch {
      // No memo yet, or an unreadable one: start empty (it only ever saves work).
    }
    return memo;
  }

  key(kind: string, text: string): string {
    return crypto.createHash('sha256').update(`${VERIFIER_MEMO_VERSION}\0${kind}\0`).update(text).digest('base64url');
  }

  get(key: string): FoundLink[] | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      // Most recently used last: the oldest are dropped first when the memo is full.
      this.entries.delete(key);
      this.entries.set(key, hit);
      this.dirty = true;
    }
    return hit;
  }

  set(key: string, links: FoundLink[]): void {
    this.entries.set(key, links);
    this.dirty = true;
  }

  /** Temp + rename, so a verifier killed mid-write leaves the old memo. */
  save(): void {
    if (!this.dirty) return;
    const all = [...this.entries];
    const kept = all.slice(Math.max(0, all.length - VERIFIER_MEMO_MAX_ENTRIES));
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify({ version: VERIFIER_MEMO_VERSION, entries: kept }));
    fs.renameSync(tmp, this.file);
    this.dirty = false;
  }
}
