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
    const fresh = await tx.$queryRawUnsafe<StoredTick[]>(sql, ...params);
    await addToTotals(tx, fresh);
    stored.push(...fresh);
  }
  return stored;
}

/**
 * The running totals (UsageTotal) move by exactly the ticks stored for the first time, in the same
 * transaction: every node reads the same figure, and a tick delivered twice adds nothing.
 */
async function addToTotals(tx: Tx, fresh: StoredTick[]): Promise<void> {
  const sums = new Map<string, { orgId: string; period: string; seconds: number }>();
  for (const t of fresh) {
    const key = `${t.orgId}\0${t.period}`;
    const sum = sums.get(key) ?? { orgId: t.orgId, period: t.period, seconds: 0 };
    sum.seconds += Number(t.agentSeconds);
    sums.set(key, sum);
  }
  for (const s of sums.values()) {
    await tx.$executeRawUnsafe(
      placeholders(
        tx,
        'INSERT INTO "UsageTotal" ("orgId","period","seconds") VALUES (?,?,?)' +
          ' ON CONFLICT ("orgId","period") DO UPDATE SET "seconds" = "UsageTotal"."seconds" + excluded."seconds"',
      ),
      s.orgId,
      s.period,
      s.seconds,
    );
  }
}

/** The period's billed seconds so far (every tick, agent and patrol). */
export async function readTotal(tx: Tx, orgId: string, period: string): Promise<number> {
  const rows = await tx.$queryRawUnsafe<Array<{ seconds: number | string }>>(
    placeholders(tx, 'SELECT "seconds" FROM "UsageTotal" WHERE "orgId" = ? AND "period" = ?'),
    orgId,
    period,
  );
  return rows.length ? Number(rows[0]!.seconds) : 0;
}
