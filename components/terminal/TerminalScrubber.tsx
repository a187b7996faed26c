'use client';
import type { TerminalTimeline, TimelineMark, TimelineMarkKind } from '../../protocol';
import { REPLAY_SPEEDS, type ReplaySpeed, type ReplayState } from './replay-player';
import { replayClock } from './replay-signal';
import { STRINGS } from '../ui/strings';

const JUMPS: Array<{ kind: TimelineMarkKind; label: string; short: string }> = [
  { kind: 'approval', label: STRINGS.replayNextApproval, short: STRINGS.replayJumpApproval },
  { kind: 'test', label: STRINGS.replayNextTest, short: STRINGS.replayJumpTest },
  { kind: 'file', label: STRINGS.replayNextFile, short: STRINGS.replayJumpFile },
  { kind: 'error', label: STRINGS.replayNextError, short: STRINGS.replayJumpError },
];

export interface TerminalScrubberProps {
  timeline: TerminalTimeline | null;
  /** null: the terminal is live. */
  replay: ReplayState | null;
  speed: ReplaySpeed;
  ended: boolean;
  onSeek(at: { ts: number } | { seq: number }): void;
  onPlay(): void;
  onPause(): void;
  onSpeed(speed: ReplaySpeed): void;
  onLive(): void;
}

/** The next moment of a kind after `seq` (the marks are in seq order). */
export function nextMark(marks: readonly TimelineMark[], kind: TimelineMarkKind, seq: number): TimelineMark | null {
  return marks.find((m) => m.kind === kind && m.seq > seq) ?? null;
}

/** Under the terminal: a time slider over the session, play/pause, speed, and jumps to the next moment of a kind. */
export default function TerminalScrubber({ timeline, replay, speed, ended, onSeek, onPlay, onPause, onSpeed, onLive }: TerminalScrubberProps) {
  const first = timeline?.first;
  const last = timeline?.last;
  if (!first || !last) return null;
  const value = replay ? Math.min(Math.max(replay.ts, first.ts), last.ts) : last.ts;
  const seq = replay?.seq ?? last.seq;
  return (
    <div className="terminal-scrubber" role="group" aria-label={STRINGS.replayControls}>
      {replay?.playing ? (
        <button type="button" className="btn" onClick={onPause} aria-label={STRINGS.replayPause}>
          ❚❚
        </button>
      ) : (
        <button type="button" className="btn" onClick={onPlay} aria-label={STRINGS.replayPlay} disabled={!replay}>
          ▶
        </button>
      )}
      <input
        type="range"
        className="scrubber-range"
        aria-label={STRINGS.replayTime}
        min={first.ts}
        max={last.ts}
        step={1}
        value={value}
        onChange={(e) => onSeek({ ts: Number(e.target.value) })}
      />
      <span className="scrubber-time" data-testid="replay-time">
        {replay ? `${STRINGS.replayingAt} ${replayClock(replay.ts)}` : ended ? STRINGS.replayEnded : STRINGS.replayLive}
      </span>
      <select aria-label={STRINGS.replaySpeed} value={speed} onChange={(e) => onSpeed(Number(e.target.value) as ReplaySpeed)}>
        {REPLAY_SPEEDS.map((s) => (
          <option key={s} value={s}>
            {s}×
          </option>
        ))}
      </select>
      <span className="scrubber-jumps">
        {JUMPS.map(({ kind, label, short }) => {
          const next = nextMark(timeline.marks, kind, replay ? seq : first.seq - 1);
          return (
            <button
              key={kind}
              type="button"
              className="btn"
              aria-label={label}
              disabled={!next}
              title={next ? `${label}: ${next.label}` : label}
              onClick={() => next && onSeek({ seq: next.seq })}
            >
              {short}
            </button>
          );
        })}
        {replay && !ended && (
          <button type="button" className="btn" aria-label={STRINGS.replayBackToLive} title={STRINGS.replayBackToLive} onClick={onLive}>
            {STRINGS.replayLiveShort}
          </button>
        )}
      </span>
    </div>
  );
}
