export const PG_BIN: string | null;
export function startPostgres(database?: string): Promise<{ url: string; port: number; stop(): void }>;
