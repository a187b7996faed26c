'use client';
import type { ApiError } from '../../protocol';

/** A failed API call, carrying the server's code and readable message. */
export class ApiRequestError extends Error {
  constructor(
    readonly code: ApiError['code'] | 'NETWORK',
    message: string,
    readonly status: number,
    /** Field by field, when the server checked a schema (run parameters). */
    readonly issues?: ApiError['issues'],
  ) {
    super(message);
  }
}

/** fetch + the `{ ok, data } | { ok, error }` envelope of every route handler. */
export async function api<T>(path: string, init?: { method?: string; body?: unknown }): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: init?.method ?? (init?.body === undefined ? 'GET' : 'POST'),
      headers: init?.body === undefined ? undefined : { 'content-type': 'application/json' },
      body: init?.body === undefined ? undefined : JSON.stringify(init.body),
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiRequestError('NETWORK', 'The control plane cannot be reached. Is the server running?', 0);
  }
  const json = (await res.json().catch(() => null)) as { ok: boolean; data?: T; error?: ApiError } | null;
  if (!json) throw new ApiRequestError('INTERNAL', `The server answered ${res.status} without a readable body.`, res.status);
  if (!json.ok) throw new ApiRequestError(json.error!.code, json.error!.message, res.status, json.error!.issues);
  return json.data as T;
}
