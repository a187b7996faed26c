import type { UsageTick } from '../../../protocol';
import { periodOf } from '../../../common/period';
import type { StoredTick, TickOwner } from '../usage';
import { placeholders } from './dialect';
import type { Tx } from './session-events';

/** Rows per INSERT: 14 parameters each stays far below SQLite's variable limit. */
const TICK_ROWS_PER_STATEMENT = 100;

/**
 * USAGE_TICKs keyed by (session, window), inserted once inside the event writer's transaction;
 * RETURNING names only the ticks that were new, so a tick delivered twice (or through two nodes)
 * counts once. (Both dialects: see dialect.ts.)
 */
export async function insertTicksOnce(tx: Tx, ticks: Array<{ tick: UsageTick; owner: TickOwner }>, receivedAt: number): Promise<StoredTick[]> {
  const stored: StoredTick[] = [];
  for (let i = 0; i < ticks.length; i += TICK_ROWS_PER_STATEMENT) {
    const slice = ticks.slice(i, i + TICK_ROWS_PER_STATEMENT);
    const sql = placeholders(
      tx,
      'INSERT INTO "UsageTick" ("sessionId","windowStart","orgId","period","kind","provider","repoId","userId",' +
        '"agentSeconds","terminalKb","filesTouched","invocations","seq","receivedAt") VALUES ' +
        slice.map(() => '(?,?,?,?,?,?,?,?,?,?,?,?,?,?)').join(',') +
        ' ON CONFLICT DO NOTHING RETURNING "sessionId","orgId","period","kind","agentSeconds"',
    );
    const params = slice.flatMap(({ tick: t, owner: o }) => [
      t.session_id,
      t.window_start,
      o.orgId,
      periodOf(t.window_start),
      o.kind,
      t.provider,
      o.repoId,
      o.userId,
      t.units.agent_seconds,
      t.units.terminal_kb,
      t.units.files_touched,
      t.units.provider_invocations,
      t.seq,
      receivedAt,
    ]);
    stored.push(...(await tx.$queryRawUnsafe<StoredTick[]>(sql, ...params)));
  }
  return stored;
}
