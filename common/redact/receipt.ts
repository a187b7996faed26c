import type { MaskEvent } from './stream';

/** More distinct (rule, secret) pairs than this in one receipt are folded into the last one. */
const MAX_ENTRIES = 1000;

export interface ReceiptEntry {
  rule: string;
  secret_name: string | null;
  count: number;
  first_seq: number;
  last_seq: number;
}

/**
 * Counts what was masked per (rule, secret name), with the first and last seq it was masked in.
 * Masks are noted while a chunk is redacted and settled once the chunk has its seq.
 */
export class RedactionTally {
  private readonly entries = new Map<string, ReceiptEntry>();
  private pending: MaskEvent[] = [];

  readonly note = (m: MaskEvent): void => {
    this.pending.push(m);
  };

  /** The masks noted since the last settle happened in the event with this seq. */
  settle(seq: number): void {
    for (const m of this.pending) this.add(m.rule, m.secret ?? null, 1, seq, seq);
    this.pending = [];
  }

  add(rule: string, secret: string | null, count: number, first: number, last: number): void {
    const key = `${rule}\0${secret ?? ''}`;
    const e = this.entries.get(key);
    if (e) {
      e.count += count;
      e.first_seq = Math.min(e.first_seq, first);
      e.last_seq = Math.max(e.last_seq, last);
    } else if (this.entries.size < MAX_ENTRIES) {
      this.entries.set(key, { rule, secret_name: secret, count, first_seq: first, last_seq: last });
    }
  }

  get size(): number {
    return this.entries.size;
  }

  list(): ReceiptEntry[] {
    return [...this.entries.values()].sort((a, b) => a.first_seq - b.first_seq || a.rule.localeCompare(b.rule));
  }
}
