import type { Period } from '../../../protocol';
import type { Db } from '../../db';
import { placeholders } from './dialect';

/**
 * The usage page's aggregates over UsageTick, in SQL both SQLite and PostgreSQL run (the derived
 * table has an alias: PostgreSQL 15 requires one). Sums come back as bigint, number or (Postgres
 * numeric) string: callers convert with Number().
 */
type Num = bigint | number | string;

/** Per day and per (kind, provider, repo, user) of one period. */
export function usageByDay(db: Db, orgId: string, period: Period) {
  return db.$queryRawUnsafe<Array<{ d: Num; kind: string; provider: string; repoId: string; userId: string; s: Num; inv: Num; kb: Num; files: Num }>>(
    placeholders(
      db,
      'SELECT CAST("windowStart" / 86400000 AS INTEGER) AS d, "kind", "provider", "repoId", "userId", SUM("agentSeconds") AS s,' +
        ' SUM("invocations") AS inv, SUM("terminalKb") AS kb, SUM("filesTouched") AS files' +
        ' FROM "UsageTick" WHERE "orgId" = ? AND "period" = ? GROUP BY d, "kind", "provider", "repoId", "userId" ORDER BY d',
    ),
    orgId,
    period,
  );
}

/** Per (kind, provider, repo, user) of one period, with the number of sessions. */
export function usageByCombo(db: Db, orgId: string, period: Period) {
  return db.$queryRawUnsafe<Array<{ kind: string; provider: string; repoId: string; userId: string; s: Num; inv: Num; kb: Num; files: Num; n: Num }>>(
    placeholders(
      db,
      'SELECT "kind", "provider", "repoId", "userId", SUM("agentSeconds") AS s, SUM("invocations") AS inv, SUM("terminalKb") AS kb,' +
        ' SUM("filesTouched") AS files, COUNT(DISTINCT "sessionId") AS n' +
        ' FROM "UsageTick" WHERE "orgId" = ? AND "period" = ? GROUP BY "kind", "provider", "repoId", "userId"',
    ),
    orgId,
    period,
  );
}

/** Per hour: the peak of agent sessions billed in one window, and the seconds. A session counts as running in a window when it was billed time in it. */
export function usageByHour(db: Db, orgId: string, period: Period) {
  return db.$queryRawUnsafe<Array<{ h: Num; peak: Num; s: Num }>>(
    placeholders(
      db,
      'SELECT w.h, MAX(w.c) AS peak, SUM(w.s) AS s FROM (SELECT CAST("windowStart" / 3600000 AS INTEGER) AS h, "windowStart", COUNT(*) AS c,' +
        ' SUM("agentSeconds") AS s FROM "UsageTick" WHERE "orgId" = ? AND "period" = ? AND "kind" = \'agent\' AND "agentSeconds" > 0' +
        ' GROUP BY "windowStart") AS w GROUP BY w.h ORDER BY w.h',
    ),
    orgId,
    period,
  );
}
