import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDir, removeTempDir } from '../testing/fixtures';
import { AckFile, readAckFile, type AckState } from './ack-file';

const base = { session_id: 'sess_aaaaaaaa', org_id: 'org_test', repo_id: 'repo_sample01', repo_ref: { provider: 'local' as const, owner: '', name: 'sample' } };
const state = (over: Partial<AckState>): AckState => ({ acked_seq: 0, last_seq: 0, last_ts: null, last_state: null, base, ...over });

describe('AckFile', () => {
  let dir: string;
  let file: string;
  const warnings: string[] = [];
  const read = () => readAckFile(file, (w) => warnings.push(w));

  beforeEach(async () => {
    dir = await makeTempDir('ack-file');
    file = path.join(dir, 'sess_aaaaaaaa.ack');
    warnings.length = 0;
  });
  afterEach(() => removeTempDir(dir));

  it('rewrites one file in place: the same inode, no temporary file, a shorter state read back exactly', () => {
    const ack = new AckFile(file);
    ack.write(state({ acked_seq: 123_456_789, last_seq: 123_456_790, last_ts: 1_700_000_000_000, last_state: 'WAITING_FOR_APPROVAL' }));
    const { ino, size } = fs.statSync(file);
    ack.write(state({ acked_seq: 7, last_seq: 8 }));
    expect(read()).toEqual(state({ acked_seq: 7, last_seq: 8 }));
    // The older, longer text is covered by padding, never left behind the new one.
    expect(fs.statSync(file)).toMatchObject({ ino, size });
    expect(fs.readdirSync(dir)).toEqual(['sess_aaaaaaaa.ack']);
    ack.close();
    expect(warnings).toEqual([]);
  });

  it("takes over an older runner's ack file without truncating it first, and covers its longer text", () => {
    fs.writeFileSync(file, JSON.stringify({ ...state({ acked_seq: 41, last_seq: 99, last_state: 'WAITING_FOR_APPROVAL' }), extra: 'x'.repeat(200) }));
    const ack = new AckFile(file);
    expect(read()).toMatchObject({ acked_seq: 41, last_seq: 99 });
    ack.write(state({ acked_seq: 42, last_seq: 99 }));
    expect(read()).toEqual(state({ acked_seq: 42, last_seq: 99 }));
    ack.close();
  });

  it('an unreadable or missing file reads as null (everything spooled is resent); junk fields read as defaults', () => {
    expect(read()).toBeNull();
    fs.writeFileSync(file, '{"acked_seq": 4, "last_s');
    expect(read()).toBeNull();
    expect(warnings).toHaveLength(1);
    fs.writeFileSync(file, JSON.stringify({ acked_seq: -1, last_seq: 2.5, last_ts: 'x', last_state: 'DANCING', base: { session_id: 1 } }));
    expect(read()).toEqual({ acked_seq: 0, last_seq: 0, last_ts: null, last_state: null, base: null });
  });
});
