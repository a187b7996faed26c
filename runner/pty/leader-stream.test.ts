import { describe, expect, it } from 'vitest';
import { LEADER_MARKER_PREFIX, LeaderStream } from './leader-stream';

const NONCE = '0123456789abcdef0123456789abcdef';
const HELLO = `${LEADER_MARKER_PREFIX}hello;${NONCE}\x07`;
const END = `${LEADER_MARKER_PREFIX}end;${NONCE}\x07`;

function feed(chunks: string[]) {
  let ends = 0;
  const s = new LeaderStream(() => ends++);
  let out = '';
  for (const c of chunks) out += s.push(c);
  return { out: out + s.flush(), ends, ended: s.ended };
}

describe('LeaderStream', () => {
  const body = 'line 1\r\n\x1b[31mred\x1b[0m\r\nlast\r\n';
  const whole = HELLO + body + END;

  it('strips both markers and reports the end, however the stream is split in two', () => {
    for (let i = 0; i <= whole.length; i++) {
      const r = feed([whole.slice(0, i), whole.slice(i)]);
      expect(r.out, `split at ${i}`).toBe(body);
      expect(r.ends).toBe(1);
    }
  });

  it('holds nothing back one character at a time except a possible marker start', () => {
    const r = feed([...whole]);
    expect(r.out).toBe(body);
    expect(r.ends).toBe(1);
  });

  it('passes a look-alike end marker with another nonce through as output and does not end', () => {
    const forged = `${LEADER_MARKER_PREFIX}end;${'f'.repeat(32)}\x07`;
    const r = feed([HELLO, 'a', forged, 'b']);
    expect(r.out).toBe(`a${forged}b`);
    expect(r.ends).toBe(0);
    expect(r.ended).toBe(false);
  });

  it('passes output after the end (left-behind jobs) through', () => {
    const r = feed([HELLO, 'x', END, 'late']);
    expect(r.out).toBe('xlate');
    expect(r.ends).toBe(1);
  });

  it('without a leader hello, output passes unchanged (an ESC at the end is released at flush)', () => {
    const r = feed(['plain ', 'text\x1b']);
    expect(r.out).toBe('plain text\x1b');
    expect(r.ends).toBe(0);
  });
});
