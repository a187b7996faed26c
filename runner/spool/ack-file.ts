import fs from 'node:fs';
import { SessionStateSchema, type RepoRef, type SessionState } from '../../protocol';
import { errorMessage } from '../log';

/**
 * A session's `<sid>.ack` (spool.ts): the seq the server acked, plus what is needed to continue
 * the session's seq after its `.spool` was rewound (last seq/ts/state and its base fields).
 *
 * Rewritten in place, one positioned write at offset 0 through a descriptor kept open, padded
 * with spaces to the file's length so no older, longer text survives behind the new one. No
 * temporary file and no rename: on this machine's ext4 (mounted with discard) writing a `.tmp`
 * and renaming it over the old file cost ~1.2 ms (the rename frees the old inode's blocks), the
 * write in place ~2–8 µs, and a flood persists its ack on every rewind and every
 * ACK_PERSIST_DELAY_MS (issue 17: renames were the runner's third-largest cost in a flood).
 *
 * Crash safety is the rename's: a runner that dies is either before the write (the old text is
 * read) or after it (the new one); the kernel does not leave half of one write to a regular file
 * behind a killed process. The file is a few hundred bytes, inside one disk sector.
 */
export interface SessionBase {
  session_id: string;
  org_id: string;
  repo_id: string;
  repo_ref: RepoRef;
}

export interface AckState {
  acked_seq: number;
  last_seq: number;
  last_ts: number | null;
  last_state: SessionState | null;
  base: SessionBase | null;
}

const SPACE = 0x20;

export class AckFile {
  private fd: number | null = null;
  /** The file's length: every write covers at least this much. */
  private bytes = 0;

  constructor(readonly path: string) {}

  write(state: AckState): void {
    const text = JSON.stringify(state);
    if (this.fd === null) {
      // No O_TRUNC: until the first write, the file keeps what the last runner wrote.
      this.fd = fs.openSync(this.path, fs.constants.O_RDWR | fs.constants.O_CREAT);
      this.bytes = fs.fstatSync(this.fd).size;
    }
    const buf = Buffer.alloc(Math.max(Buffer.byteLength(text), this.bytes), SPACE);
    buf.write(text);
    const written = fs.writeSync(this.fd, buf, 0, buf.byteLength, 0);
    if (written !== buf.byteLength) throw new Error(`short write to ${this.path} (${written} of ${buf.byteLength} bytes)`);
    this.bytes = buf.byteLength;
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}

/**
 * The ack file at `file` (this runner's, or an older runner's written whole and renamed), or null
 * when there is none. Unreadable: null too, with why in `warn` (everything spooled is resent).
 */
export function readAckFile(file: string, warn: (message: string) => void): AckState | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  try {
    const raw = JSON.parse(text) as Partial<AckState>;
    const num = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : 0);
    const state = SessionStateSchema.safeParse(raw.last_state);
    const b = raw.base;
    const base =
      b && typeof b.session_id === 'string' && typeof b.org_id === 'string' && typeof b.repo_id === 'string' && b.repo_ref ? b : null;
    return {
      acked_seq: num(raw.acked_seq),
      last_seq: num(raw.last_seq),
      last_ts: typeof raw.last_ts === 'number' ? raw.last_ts : null,
      last_state: state.success ? state.data : null,
      base,
    };
  } catch (err) {
    warn(`unreadable (${errorMessage(err)})`);
    return null;
  }
}
