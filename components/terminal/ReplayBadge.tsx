'use client';
import { STRINGS } from '../ui/strings';
import { replayClock, useReplaySignal } from './replay-signal';

/** Over the village while a terminal replays: which moment the sprite is showing. */
export default function ReplayBadge() {
  const replay = useReplaySignal();
  if (!replay) return null;
  return (
    <div className="village-replay-badge" role="status" data-testid="village-replay">
      {STRINGS.replayingAt} {replayClock(replay.ts)}
    </div>
  );
}
