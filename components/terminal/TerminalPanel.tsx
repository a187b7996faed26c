'use client';
import { useEffect, useRef, useState } from 'react';
import type { Terminal as XTerm } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import type { SessionSummary, WireEvent } from '../../protocol';
import { FLOW_CONTROL, TERMINAL_STATES } from '../../protocol';
import { getUiSocket } from '../realtime/socket';
import { STRINGS, stateLabel } from '../ui/strings';

/** Small outputs are acked after this long, coalesced; big ones every FLOW_CONTROL.ACK_CHARS at once. */
const ACK_INTERVAL_MS = 20;
/** Resize events settle for this long before the PTY is resized (dragging fires many). */
const RESIZE_DEBOUNCE_MS = 80;

declare global {
  interface Window {
    /** Open terminals by session id (tests read their buffers). */
    __avTerminals?: Record<string, XTerm>;
    /** Optional tap on every terminal chunk (the throughput benchmark checksums through it). */
    __avOnChunk?: (sessionId: string, data: string) => void;
  }
}

const THEME = {
  background: '#14161b',
  foreground: '#e6e1d6',
  cursor: '#f2b84b',
  selectionBackground: '#3b4252',
};

export interface TerminalPanelProps {
  session: SessionSummary;
  readOnly: boolean;
  onClose(): void;
  onStop(): void;
}

/**
 * The live terminal of one session: attach with the last seen seq, paint the replay with input
 * disabled, then stream; ack output only after xterm has parsed it (flow control).
 */
export default function TerminalPanel({ session, readOnly, onClose, onStop }: TerminalPanelProps) {
  const hostRef = useRef<HTMLDivElement>(null);
  const [phase, setPhase] = useState<'replaying' | 'live'>('replaying');
  const [error, setError] = useState<string | null>(null);
  const sessionId = session.id;
  const ended = (TERMINAL_STATES as string[]).includes(session.state);

  useEffect(() => {
    let cancelled = false;
    let cleanup = () => {};
    void (async () => {
      const [{ Terminal }, { FitAddon }] = await Promise.all([import('@xterm/xterm'), import('@xterm/addon-fit')]);
      if (cancelled || !hostRef.current) return;
      const term = new Terminal({
        fontFamily: '"DejaVu Sans Mono", "Cascadia Mono", Menlo, Consolas, monospace',
        fontSize: 13,
        cursorBlink: true,
        scrollback: 5000,
        theme: THEME,
        disableStdin: true,
      });
      const fit = new FitAddon();
      term.loadAddon(fit);
      term.open(hostRef.current);
      fit.fit();
      window.__avTerminals = { ...window.__avTerminals, [sessionId]: term };

      const socket = getUiSocket();
      let lastSeq = 0;
      let replaying = true;
      let ackSeq = 0;
      let unackedChars = 0;
      let ackTimer: ReturnType<typeof setTimeout> | null = null;
      let sentSize = { cols: 0, rows: 0 };

      const sendAck = () => {
        if (ackTimer) clearTimeout(ackTimer);
        ackTimer = null;
        unackedChars = 0;
        socket.emit('terminal:ack', { session_id: sessionId, seq: ackSeq });
      };
      const scheduleAck = (seq: number, chars: number) => {
        ackSeq = Math.max(ackSeq, seq);
        unackedChars += chars;
        if (unackedChars >= FLOW_CONTROL.ACK_CHARS) return sendAck();
        ackTimer ??= setTimeout(sendAck, ACK_INTERVAL_MS);
      };

      const sendResize = () => {
        if (readOnly || replaying) return;
        if (term.cols === sentSize.cols && term.rows === sentSize.rows) return;
        sentSize = { cols: term.cols, rows: term.rows };
        socket.emit('terminal:resize', { session_id: sessionId, cols: term.cols, rows: term.rows });
      };

      const onEvents = (body: { session_id: string; events: WireEvent[]; replay: boolean }) => {
        if (body.session_id !== sessionId) return;
        for (const e of body.events) {
          if (e.seq <= lastSeq) continue; // a duplicate after a reconnect
          lastSeq = e.seq;
          if (e.type === 'TERMINAL_CHUNK' && e.data !== undefined) {
            const seq = e.seq;
            const chars = e.data.length;
            const live = !body.replay;
            window.__avOnChunk?.(sessionId, e.data);
            term.write(e.data, () => {
              if (live) scheduleAck(seq, chars);
            });
          } else if (e.type === 'OUTPUT_GAP') {
            term.write(`\r\n\x1b[33m[output lost: ${String(e.payload?.reason ?? 'the runner was down')}]\x1b[0m\r\n`);
          } else if (e.type === 'SESSION_STATE_CHANGED') {
            const to = String(e.payload?.to ?? '');
            if (to === 'COMPLETED' || to === 'FAILED') {
              term.write(`\r\n\x1b[2m[session ${to === 'COMPLETED' ? 'finished' : 'failed'}: ${String(e.payload?.reason ?? '')}]\x1b[0m\r\n`);
            }
          }
        }
      };
      const onReplayed = (body: { session_id: string }) => {
        if (body.session_id !== sessionId) return;
        replaying = false;
        term.options.disableStdin = readOnly;
        setPhase('live');
        sendResize();
        if (!readOnly) term.focus();
      };
      const attach = () => {
        replaying = true;
        term.options.disableStdin = true;
        setPhase('replaying');
        socket.emit('session:attach', { session_id: sessionId, after_seq: lastSeq }, (res) => {
          if (!res.ok) setError(res.error.message);
          else setError(null);
        });
      };

      socket.on('session:events', onEvents);
      socket.on('session:replayed', onReplayed);
      socket.on('connect', attach); // after a reconnect: resume from the last seq, no gap, no duplicate
      if (socket.connected) attach();

      const input = term.onData((data) => {
        if (replaying || readOnly) return;
        socket.emit('terminal:input', { session_id: sessionId, data }, (res) => {
          if (res && !res.ok) setError(res.error.message);
        });
      });

      let resizeTimer: ReturnType<typeof setTimeout> | null = null;
      const observer = new ResizeObserver(() => {
        if (resizeTimer) clearTimeout(resizeTimer);
        resizeTimer = setTimeout(() => {
          fit.fit();
          sendResize();
        }, RESIZE_DEBOUNCE_MS);
      });
      observer.observe(hostRef.current);

      cleanup = () => {
        observer.disconnect();
        if (resizeTimer) clearTimeout(resizeTimer);
        if (ackTimer) clearTimeout(ackTimer);
        input.dispose();
        socket.off('session:events', onEvents);
        socket.off('session:replayed', onReplayed);
        socket.off('connect', attach);
        socket.emit('session:detach', { session_id: sessionId });
        if (window.__avTerminals?.[sessionId] === term) delete window.__avTerminals[sessionId];
        term.dispose();
      };
    })();
    return () => {
      cancelled = true;
      cleanup();
    };
  }, [sessionId, readOnly]);

  return (
    <section className="terminal-panel" aria-label={`Terminal of ${session.title}`} data-session-id={sessionId} data-phase={phase}>
      <header className="terminal-bar">
        <span className="terminal-title">{session.title}</span>
        <span className={`state-pill state-${session.state.toLowerCase()}`}>{stateLabel(session.state)}</span>
        <span className="terminal-reason">{session.reason}</span>
        {phase === 'replaying' && <span className="terminal-note" role="status">{STRINGS.replaying}</span>}
        {readOnly && <span className="terminal-note">{STRINGS.readOnly}</span>}
        <span className="spacer" />
        {!readOnly && !ended && (
          <button type="button" className="btn btn-danger" onClick={onStop}>
            {STRINGS.stopSession}
          </button>
        )}
        <button type="button" className="btn" onClick={onClose} aria-label={STRINGS.closeTerminal}>
          ✕
        </button>
      </header>
      {error && (
        <p className="error-line" role="alert">
          {error}
        </p>
      )}
      <div className="terminal-host" ref={hostRef} />
    </section>
  );
}
