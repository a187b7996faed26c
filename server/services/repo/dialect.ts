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

/** Prisma's unique-constraint error (P2002), recognised by code: the class is bundled twice under Next. */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'P2002';
}

/**
 * Inserts a row that may already be there (written by another node, or by a save racing this
 * one): the duplicate is the row wanted, so its unique-key error is not one. (Not inside a
 * PostgreSQL transaction: the error would abort it.)
 */
export async function insertOnce(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
  }
}
