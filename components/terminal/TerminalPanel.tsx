'use client';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { Terminal as XTerm } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import type { Result, SessionSummary, TerminalTimeline } from '../../protocol';
import { fail, TERMINAL_STATES } from '../../protocol';
import { getUiSocket } from '../realtime/socket';
import { STRINGS, stateLabel } from '../ui/strings';
import { InputQueue } from './input-queue';
import { streamLive } from './live-stream';
import { ReplayPlayer, type ReplaySpeed, type ReplayState } from './replay-player';
import { publishReplay } from './replay-signal';
import { roomAt, roomSteps } from './replay-walk';
import TerminalScrubber from './TerminalScrubber';
import { openTerminal } from './xterm-setup';

/** Resize events settle for this long before the PTY is resized (dragging fires many). */
const RESIZE_DEBOUNCE_MS = 80;
/** Keys the server has not confirmed after this long are reported (the connection may be gone). */
const INPUT_ACK_TIMEOUT_MS = 15_000;
/** The scrubber's span of a live session grows: its timeline is read again this often. */
const TIMELINE_REFRESH_MS = 5_000;

declare global {
  interface Window {
    /** Open terminals by session id (tests read their buffers). */
    __avTerminals?: Record<string, XTerm>;
  }
}

export interface TerminalPanelProps {
  session: SessionSummary;
  readOnly: boolean;
  /** What the bar says instead of the read-only note (the story page: it is a replay). */
  readOnlyNote?: string;
  onClose(): void;
  onStop(): void;
}

/**
 * A session's terminal, live or ended: painted from the serialised screen, then streamed; the
 * scrubber under it replays any moment (the same terminal switches to replay, input off).
 * Works for ended sessions too (the story page opens them with it).
 */
export default function TerminalPanel({ session, readOnly, readOnlyNote, onClose, onStop }: TerminalPanelProps) {
  const hostRef = useRef<HTMLDivElement>(null);
  const [phase, setPhase] = useState<'replaying' | 'live'>('replaying');
  const [error, setError] = useState<string | null>(null);
  const [timeline, setTimeline] = useState<TerminalTimeline | null>(null);
  const [replay, setReplay] = useState<ReplayState | null>(null);
  const [speed, setSpeed] = useState<ReplaySpeed>(1);
  const control = useRef<{ seek(at: { ts: number } | { seq: number }): void; play(): void; pause(): void; speed(s: ReplaySpeed): void; live(): void } | null>(null);
  const sessionId = session.id;
  const ended = (TERMINAL_STATES as string[]).includes(session.state);

  useEffect(() => {
    let cancelled = false;
    let cleanup = () => {};
    void (async () => {
      if (!hostRef.current) return;
      const { term, fit } = await openTerminal(hostRef.current);
      if (cancelled) {
        term.dispose();
        return;
      }
      window.__avTerminals = { ...window.__avTerminals, [sessionId]: term };
      const socket = getUiSocket();
      let sentSize = { cols: 0, rows: 0 };
      let player: ReplayPlayer | null = null;

      const sendResize = () => {
        if (readOnly || player || stream?.replaying()) return;
        if (term.cols === sentSize.cols && term.rows === sentSize.rows) return;
        sentSize = { cols: term.cols, rows: term.rows };
        socket.emit('terminal:resize', { session_id: sessionId, cols: term.cols, rows: term.rows });
      };
      const goLive = () =>
        streamLive(term, socket, sessionId, {
          onPhase(replaying) {
            term.options.disableStdin = replaying || readOnly;
            setPhase(replaying ? 'replaying' : 'live');
            if (!replaying) {
              sendResize();
              if (!readOnly) term.focus();
            }
          },
          onError: setError,
        });
      let stream: ReturnType<typeof streamLive> | null = goLive();

      const loadTimeline = () =>
        socket.emit('terminal:timeline', { session_id: sessionId }, (res) => {
          if (!cancelled && res.ok) setTimeline(res.data);
        });
      loadTimeline();
      const timelineTimer = setInterval(loadTimeline, TIMELINE_REFRESH_MS);

      const replayer = () => {
        if (player) return player;
        stream?.dispose();
        stream = null;
        term.options.disableStdin = true;
        player = new ReplayPlayer(term, socket, sessionId, (state) => setReplay(state));
        return player;
      };
      control.current = {
        seek: (at) => void replayer().seek(at).catch((e: Error) => setError(e.message)),
        play: () => player?.play(),
        pause: () => player?.pause(),
        speed: (s) => player?.setSpeed(s),
        live() {
          player?.dispose();
          player = null;
          setReplay(null);
          stream = goLive();
        },
      };

      // One message in flight at a time; keys typed meanwhile go together in the next (input-queue.ts).
      const keys = new InputQueue(
        (data) =>
          (socket.timeout(INPUT_ACK_TIMEOUT_MS).emitWithAck('terminal:input', { session_id: sessionId, data }) as Promise<Result<null>>).catch(() =>
            fail('RUNNER_ERROR', STRINGS.inputTimeout),
          ),
        setError,
      );
      const input = term.onData((data) => {
        if (!stream || stream.replaying() || readOnly) return;
        keys.push(data);
      });

      let resizeTimer: ReturnType<typeof setTimeout> | null = null;
      const observer = new ResizeObserver(() => {
        if (resizeTimer) clearTimeout(resizeTimer);
        resizeTimer = setTimeout(() => {
          fit();
          sendResize();
        }, RESIZE_DEBOUNCE_MS);
      });
      observer.observe(hostRef.current!);

      cleanup = () => {
        observer.disconnect();
        clearInterval(timelineTimer);
        if (resizeTimer) clearTimeout(resizeTimer);
        input.dispose();
        keys.dispose();
        player?.dispose();
        stream?.dispose();
        control.current = null;
        if (window.__avTerminals?.[sessionId] === term) delete window.__avTerminals[sessionId];
        term.dispose();
      };
    })();
    return () => {
      cancelled = true;
      cleanup();
      publishReplay(null);
    };
  }, [sessionId, readOnly]);

  const steps = useMemo(() => roomSteps(timeline?.marks ?? []), [timeline]);
  // The village follows the replay: "replaying HH:MM:SS" and the sprite in the room of that moment.
  useEffect(() => {
    publishReplay(replay ? { sessionId, ts: replay.ts, room: roomAt(steps, replay.ts), steps } : null);
  }, [replay, steps, sessionId]);

  const onSpeed = useCallback((s: ReplaySpeed) => {
    setSpeed(s);
    control.current?.speed(s);
  }, []);

  return (
    <section
      className="terminal-panel"
      aria-label={`Terminal of ${session.title}`}
      data-session-id={sessionId}
      data-phase={phase}
      data-mode={replay ? 'replay' : 'live'}
      data-replay-seq={replay?.seq}
    >
      <header className="terminal-bar">
        <span className="terminal-title">{session.title}</span>
        <span className={`state-pill state-${session.state.toLowerCase()}`}>{stateLabel(session.state)}</span>
        <span className="terminal-reason">{session.reason}</span>
        {phase === 'replaying' && !replay && <span className="terminal-note" role="status">{STRINGS.replaying}</span>}
        {readOnly && <span className="terminal-note">{readOnlyNote ?? STRINGS.readOnly}</span>}
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
      <TerminalScrubber
        timeline={timeline}
        replay={replay}
        speed={speed}
        ended={ended}
        onSeek={(at) => control.current?.seek(at)}
        onPlay={() => control.current?.play()}
        onPause={() => control.current?.pause()}
        onSpeed={onSpeed}
        onLive={() => control.current?.live()}
      />
    </section>
  );
}
