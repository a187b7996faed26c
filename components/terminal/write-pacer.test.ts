import { describe, expect, it } from 'vitest';
import { WritePacer } from './write-pacer';

/** A clock the test moves by hand: the pacer's timer fires when the test says time has passed. */
function manualClock() {
  let now = 0;
  let pending: { at: number; fn: () => void } | null = null;
  return {
    now: () => now,
    setTimeout(fn: () => void, ms: number) {
      pending = { at: now + ms, fn };
      return pending;
    },
    clearTimeout(h: unknown) {
      if (pending === h) pending = null;
    },
    advance(ms: number) {
      now += ms;
      const p = pending;
      if (p && p.at <= now) {
        pending = null;
        p.fn();
      }
    },
    get waiting() {
      return pending !== null;
    },
  };
}

function setup(maxHeldBytes = 1_000) {
  const clock = manualClock();
  const xterm: string[] = [];
  const parsed: string[] = [];
  const pacer = new WritePacer(
    (data, cb) => {
      xterm.push(typeof data === 'string' ? data : new TextDecoder().decode(data));
      cb?.();
    },
    50,
    10,
    clock,
    maxHeldBytes,
  );
  const push = (data: string) => pacer.push({ data, parsed: () => parsed.push(data) });
  return { clock, xterm, parsed, pacer, push };
}

describe('terminal writes paced during a flood', () => {
  it('hands sparse output (echo, prompts, small repaints) to xterm at once', () => {
    const { xterm, push, clock } = setup();
    push('a');
    push('b');
    push('c');
    expect(xterm).toEqual(['a', 'b', 'c']);
    expect(clock.waiting).toBe(false);
  });

  it('holds what follows a big write until the interval, then writes it all at once, in order', () => {
    const { xterm, parsed, push, clock } = setup();
    push('flood-0001'); // big (≥10): written at once, the next ones wait
    push('x');
    push('flood-0002');
    push('y');
    expect(xterm).toEqual(['flood-0001']);
    clock.advance(49);
    expect(xterm).toEqual(['flood-0001']);
    clock.advance(1);
    expect(xterm).toEqual(['flood-0001', 'x', 'flood-0002', 'y']);
    // Acks wait for xterm: only what was handed over and parsed is reported.
    expect(parsed).toEqual(xterm);
  });

  it('counts a flood of small writes too: the bytes of one interval decide', () => {
    const { xterm, push, clock } = setup();
    push('12345');
    clock.advance(10);
    push('67890'); // 10 bytes within the interval: a flood from here
    clock.advance(10);
    push('a');
    expect(xterm).toEqual(['12345', '67890']);
    clock.advance(40);
    expect(xterm).toEqual(['12345', '67890', 'a']);
  });

  it('holds no more than its cap of a flood: past it the writes go at once (held output is not acked, and the PTY waits for acks)', () => {
    const { xterm, parsed, push, clock } = setup(25);
    push('flood-0001'); // a flood from here
    push('flood-0002');
    push('flood-0003');
    expect(xterm).toEqual(['flood-0001']);
    push('flood-0004'); // 30 bytes wait: over the cap of 25
    expect(xterm).toEqual(['flood-0001', 'flood-0002', 'flood-0003', 'flood-0004']);
    expect(parsed).toEqual(xterm);
    // Still a flood: what follows waits for the interval again (or the cap).
    push('x');
    expect(xterm).toHaveLength(4);
    clock.advance(50);
    expect(xterm).toEqual(['flood-0001', 'flood-0002', 'flood-0003', 'flood-0004', 'x']);
  });

  it('goes back to writing at once when the flood is over', () => {
    const { xterm, push, clock } = setup();
    push('flood-0001');
    clock.advance(60);
    push('z');
    expect(xterm).toEqual(['flood-0001', 'z']);
  });

  it('drops what waits when a serialised screen replaces it, without acking it', () => {
    const { xterm, parsed, pacer, push, clock } = setup();
    push('flood-0001');
    push('flood-0002');
    pacer.drop();
    clock.advance(100);
    expect(xterm).toEqual(['flood-0001']);
    expect(parsed).toEqual(['flood-0001']);
    push('after');
    expect(xterm).toEqual(['flood-0001', 'after']);
  });

  it('tells each write right before xterm gets it (the bench checksum and the live phase hang on this)', () => {
    const { xterm, pacer, push, clock } = setup();
    const seen: number[] = [];
    push('flood-0001');
    pacer.push({ data: '', written: () => seen.push(xterm.length) });
    expect(seen).toEqual([]);
    clock.advance(50);
    expect(seen).toEqual([1]);
  });
});
