import { describe, expect, it } from 'vitest';
import type { RunnerEvent } from '../../protocol';
import { chunkHeadPrefix, decodeRecords, encodeRecord } from './spool-file';

const base = { session_id: 'sess_record01', org_id: 'org_test', repo_id: 'repo_test001', repo_ref: { provider: 'local' as const, owner: '', name: 'dépôt' } };
const chunk = (data: string, seq = 7): RunnerEvent => ({ ...base, ts: 1, seq, type: 'TERMINAL_CHUNK', data });

/** What a chunk's record must be, whichever way it was encoded: its header line, then its text's UTF-8. */
function expected(e: RunnerEvent & { type: 'TERMINAL_CHUNK' }): Buffer {
  const { data, ...head } = e;
  return Buffer.concat([Buffer.from(`${JSON.stringify({ ...head, bytes: Buffer.byteLength(data) })}\n`), Buffer.from(data)]);
}

describe('spool records', () => {
  it('encode a chunk as its header line and its exact UTF-8, ASCII or not, wherever the multi-byte characters are', () => {
    const texts = [
      '',
      'plain ascii\r\n'.repeat(50),
      'é at the start, then ascii',
      'ascii, then at the end: 😀',
      `${'x'.repeat(99)}é`, // the length guessed from ASCII (100) has fewer digits than the bytes (101)
      `${'x'.repeat(98)}😀`,
      '漢字'.repeat(3000),
      '\x1b[1;32m✓\x1b[0m passed — "quoted" \\ ok\r\n'.repeat(200),
      '{"type":"TERMINAL_CHUNK","bytes":3}\nabc',
    ];
    for (const text of texts) {
      const event = chunk(text);
      const { record, parts } = encodeRecord(event);
      const bytes = Buffer.concat(parts);
      expect(bytes.equals(expected(event as RunnerEvent & { type: 'TERMINAL_CHUNK' }))).toBe(true);
      // The session's header prefix (what the spool appends with) writes the very same bytes.
      expect(Buffer.concat(encodeRecord(event, chunkHeadPrefix(base)).parts).equals(bytes)).toBe(true);
      expect(record.size).toBe(bytes.byteLength);
      expect(record.event).toBe(event);
      // The bytes the frame sends are the text's UTF-8, and the very ones written.
      expect(record.utf8?.equals(Buffer.from(text))).toBe(true);
      expect(bytes.subarray(bytes.byteLength - record.utf8!.byteLength).equals(record.utf8!)).toBe(true);
      expect(decodeRecords(bytes, base.session_id).records.map((r) => r.event)).toEqual([event]);
    }
  });

  it('keep a chunk with half a surrogate pair, and any other event, as one JSON line', () => {
    const torn = chunk('ab\ud83d', 1);
    const state: RunnerEvent = { ...base, ts: 1, seq: 2, type: 'SESSION_STATE_CHANGED', from: 'CREATED', to: 'PREPARING_WORKSPACE', reason: 'r' };
    const both = [torn, state].map((e) => encodeRecord(e));
    for (const [i, { record, parts }] of both.entries()) {
      expect(record.utf8).toBeUndefined();
      expect(Buffer.concat(parts).toString('utf8')).toBe(`${JSON.stringify([torn, state][i])}\n`);
    }
    const file = Buffer.concat(both.flatMap((r) => r.parts));
    expect(decodeRecords(file, base.session_id).records.map((r) => r.event)).toEqual([torn, state]);
  });
});
