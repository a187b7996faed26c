import type { Socket } from 'socket.io';
import type { UiClientToServerEvents, UiServerToClientEvents, WireEvent } from '../../protocol';
import type { Principal } from '../services/auth';
import { LiveHold } from './live-hold';
import { ChunkBytes, emitBinary } from './terminal-frames';

export interface UiSocketData {
  principal: Principal;
  /** The login cookie: every event re-reads the principal from it (role, membership, login still valid). */
  token: string;
}
export type UiSocket = Socket<UiClientToServerEvents, UiServerToClientEvents, Record<string, never>, UiSocketData>;

/**
 * One attached terminal view. While `replaying`, live events are buffered so the replay from the
 * database and the live stream join with no gap and no duplicate.
 */
export interface Viewer {
  socket: UiSocket;
  runnerId: string | null;
  replaying: boolean;
  buffer: WireEvent[];
  lastSeq: number;
  ackSeq: number;
  /** Live output as binary `terminal:output` frames (attach `binary: true`) instead of JSON events. */
  binary: boolean;
}

/** Live events to one viewer, in seq order: binary frames for its output when it asked for them. */
export function sendLive(sessionId: string, viewer: Viewer, events: WireEvent[], bytes = new ChunkBytes()): void {
  const { socket } = viewer;
  if (!viewer.binary) {
    socket.emit('session:events', { session_id: sessionId, events, replay: false });
    return;
  }
  emitBinary(
    events,
    {
      events: (list) => socket.emit('session:events', { session_id: sessionId, events: list, replay: false }),
      output: (frame) => socket.emit('terminal:output', { session_id: sessionId, ...frame }),
    },
    bytes,
  );
}

/** What the viewers' flow control tells the session's runner (server/services/sessions.ts). */
export interface FlowControlPort {
  terminalAck(runnerId: string | null, sessionId: string, seq: number): Promise<void> | void;
  releaseFlowControl(sessionId: string): Promise<unknown>;
}

/**
 * The attached terminal views of this node, per session: live fan-out in seq order, and flow
 * control — the furthest ack of any viewer goes to the runner, and the last viewer leaving lets
 * the PTY run on.
 */
export class LiveViewers {
  private readonly bySession = new Map<string, Map<string, Viewer>>();
  private readonly forwardedAck = new Map<string, number>();
  /**
   * The highest seq sent live to a watched session's viewers, stored yet or not (the live path
   * runs ahead of storing): when the last viewer leaves, everything up to it is let go at once.
   */
  private readonly liveSeq = new Map<string, number>();
  /** Output under a flood goes to each viewer in fewer, bigger frames (live-hold.ts). */
  private readonly hold = new LiveHold<Viewer>((v, events, bytes) => sendLive(this.sessionOf.get(v)!, v, events, bytes));
  private readonly sessionOf = new WeakMap<Viewer, string>();

  constructor(private readonly flow: FlowControlPort) {}

  get(sessionId: string, socketId: string): Viewer | undefined {
    return this.bySession.get(sessionId)?.get(socketId);
  }

  watched(sessionId: string): boolean {
    return (this.bySession.get(sessionId)?.size ?? 0) > 0;
  }

  add(sessionId: string, socketId: string, viewer: Viewer): void {
    let set = this.bySession.get(sessionId);
    if (!set) this.bySession.set(sessionId, (set = new Map()));
    set.set(socketId, viewer);
    this.sessionOf.set(viewer, sessionId);
  }

  /** The fastest viewer drives the PTY; a slower one catches up from the stream it is sent. */
  forwardAck(sessionId: string, viewer: Viewer, seq: number): void {
    viewer.ackSeq = Math.min(Math.max(viewer.ackSeq, seq), viewer.lastSeq);
    if (viewer.ackSeq <= (this.forwardedAck.get(sessionId) ?? 0)) return;
    this.forwardedAck.set(sessionId, viewer.ackSeq);
    void this.flow.terminalAck(viewer.runnerId, sessionId, viewer.ackSeq);
  }

  remove(sessionId: string, socketId: string): void {
    const set = this.bySession.get(sessionId);
    const v = set?.get(socketId);
    if (!set || !v) return;
    set.delete(socketId);
    this.hold.drop(v);
    if (set.size === 0) {
      this.bySession.delete(sessionId);
      this.forwardedAck.delete(sessionId);
      const sent = this.liveSeq.get(sessionId) ?? 0;
      this.liveSeq.delete(sessionId);
      // The last viewer left: let the runner run on without waiting for acks nobody will send.
      // The stored prefix alone is not enough while storing lags behind what viewers were sent:
      // what they were sent counts as consumed now, and the rest once it is stored (ingest acks
      // stored output of sessions nobody watches).
      if (sent > 0) void this.flow.terminalAck(v.runnerId, sessionId, sent);
      void this.flow.releaseFlowControl(sessionId).catch((e) => console.error('[server] release flow control', e));
    }
  }

  /**
   * A batch of the session's live events to every viewer that lacks them (buffered while one
   * replays); `utf8`: some chunks' bytes by seq, sent as they are instead of encoding their text.
   */
  fanOut(sessionId: string, events: WireEvent[], utf8?: ReadonlyMap<number, Uint8Array>): void {
    const watching = this.bySession.get(sessionId);
    if (!watching?.size || !events.length) return;
    this.liveSeq.set(sessionId, Math.max(this.liveSeq.get(sessionId) ?? 0, ...events.map((e) => e.seq)));
    const bytes = new ChunkBytes(utf8);
    for (const v of watching.values()) {
      if (v.replaying) {
        v.buffer.push(...events);
        continue;
      }
      const fresh = events.filter((e) => e.seq > v.lastSeq);
      if (!fresh.length) continue;
      this.hold.deliver(v, fresh, bytes);
      v.lastSeq = fresh.at(-1)!.seq;
    }
  }
}
