'use client';
import type { Terminal as XTerm } from '@xterm/xterm';
import type { TerminalScreen, WireEvent } from '../../protocol';
import { TerminalOutputFrameSchema } from '../../protocol';
import { terminalNote } from '../../common/terminal-notes';
import type { UiSocket } from '../realtime/socket';
import { AckScheduler } from './ack-scheduler';
import { WritePacer } from './write-pacer';

declare global {
  interface Window {
    /** Optional tap on every terminal chunk (the throughput benchmark checksums through it). */
    __avOnChunk?: (sessionId: string, data: string | Uint8Array) => void;
    /** Bench hook (bench:live BENCH_PACE_AB): hand every write to xterm at once, as before write-pacer.ts. */
    __avUnpacedWrites?: boolean;
  }
}

export interface LiveStreamHooks {
  /** Painting the screen (true) or live (false): input waits until painted. */
  onPhase(replaying: boolean): void;
  onError(message: string | null): void;
}

/**
 * The live half of a terminal view: attach from the serialised screen (constant cost however
 * long the session ran), then stream; ack output only after xterm has parsed it (flow control).
 * Reconnects attach again from a fresh screen, so nothing is lost or doubled. Live output comes
 * as binary frames (protocol/terminal-live.ts): UTF-8 bytes handed to xterm as they are, a
 * flood's in batches (write-pacer.ts); everything after the screen goes through the pacer, in order.
 */
export function streamLive(term: XTerm, socket: UiSocket, sessionId: string, hooks: LiveStreamHooks): { dispose(): void; replaying(): boolean } {
  let lastSeq = 0;
  let replaying = true;
  const acks = new AckScheduler((seq) => socket.emit('terminal:ack', { session_id: sessionId, seq }));
  const writes = new WritePacer((data, parsed) => term.write(data, parsed), window.__avUnpacedWrites ? 0 : undefined);
  /** Live output handed to xterm and not parsed yet: at 0 xterm has drained, and a flood's batch is acked at once. */
  let inXterm = 0;
  /** A live output's write: tapped as it goes to xterm, acked once parsed. */
  const liveWrite = (data: string | Uint8Array, seq: number, chars: number) => ({
    data,
    written() {
      inXterm++;
      window.__avOnChunk?.(sessionId, data);
    },
    parsed() {
      acks.parsed(seq, chars);
      inXterm = Math.max(0, inXterm - 1);
      if (inXterm === 0) acks.drained();
    },
  });

  const onSnapshot = (body: { session_id: string; screen: TerminalScreen; scrollback: number }) => {
    if (body.session_id !== sessionId) return;
    writes.drop(); // what waited is on the screen below, or comes again after it
    inXterm = 0;
    term.reset();
    term.options.scrollback = body.scrollback;
    term.write(body.screen.data);
    lastSeq = body.screen.seq;
  };
  const onEvents = (body: { session_id: string; events: WireEvent[]; replay: boolean }) => {
    if (body.session_id !== sessionId) return;
    for (const e of body.events) {
      if (e.seq <= lastSeq) continue; // a duplicate after a reconnect
      lastSeq = e.seq;
      if (e.type === 'TERMINAL_CHUNK' && e.data !== undefined) {
        const data = e.data;
        // Replayed output was acked by whoever watched it live (or by storing it): only live output is acked here.
        writes.push(body.replay ? { data, written: () => window.__avOnChunk?.(sessionId, data) } : liveWrite(data, e.seq, data.length));
      } else {
        const note = terminalNote(e);
        if (note) writes.push({ data: note });
      }
    }
  };
  const onOutput = (raw: unknown) => {
    const parsed = TerminalOutputFrameSchema.safeParse(raw);
    if (!parsed.success) {
      hooks.onError('The server sent a terminal frame this page cannot read; reload the page.');
      return;
    }
    const frame = parsed.data;
    if (frame.session_id !== sessionId) return;
    const last = frame.from_seq + frame.sizes.length - 1;
    if (last <= lastSeq) return; // a duplicate after a reconnect
    let data = frame.data;
    if (frame.from_seq <= lastSeq) {
      // Part of it was painted already: skip exactly the chunks this view has.
      const skip = frame.sizes.slice(0, lastSeq - frame.from_seq + 1).reduce((a, b) => a + b, 0);
      data = data.subarray(skip);
    }
    lastSeq = last;
    writes.push(liveWrite(data, last, data.byteLength));
  };
  const onReplayed = (body: { session_id: string }) => {
    if (body.session_id !== sessionId) return;
    // Live once the replayed tail is handed to xterm (it may still wait in the pacer).
    writes.push({
      data: '',
      written() {
        replaying = false;
        hooks.onPhase(false);
      },
    });
  };
  const attach = () => {
    replaying = true;
    hooks.onPhase(true);
    socket.emit('session:attach', { session_id: sessionId, after_seq: lastSeq, snapshot: true, binary: true }, (res) => hooks.onError(res.ok ? null : res.error.message));
  };

  socket.on('session:snapshot', onSnapshot);
  socket.on('session:events', onEvents);
  socket.on('terminal:output', onOutput);
  socket.on('session:replayed', onReplayed);
  socket.on('connect', attach);
  if (socket.connected) attach();

  return {
    replaying: () => replaying,
    dispose() {
      writes.dispose();
      acks.dispose();
      socket.off('session:snapshot', onSnapshot);
      socket.off('session:events', onEvents);
      socket.off('terminal:output', onOutput);
      socket.off('session:replayed', onReplayed);
      socket.off('connect', attach);
      socket.emit('session:detach', { session_id: sessionId });
    },
  };
}
