/**
 * The two SQL dialects behind Prisma (SQLite, PostgreSQL). Repository functions write `?`
 * placeholders and `INSERT … ON CONFLICT DO NOTHING … RETURNING` (which both databases speak);
 * only the placeholder syntax differs, and it is rewritten here.
 */

/** Prisma's client (and its interactive transaction proxy) name their provider here. */
type WithProvider = { _activeProvider?: string };

export function isPostgres(client: unknown): boolean {
  return (client as WithProvider)._activeProvider === 'postgresql';
}

/** `?` placeholders as the client's database wants them (`$1, $2, …` on PostgreSQL). No `?` may appear inside a string literal. */
export function placeholders(client: unknown, sql: string): string {
  if (!isPostgres(client)) return sql;
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
