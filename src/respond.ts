// JSON responses and the spec's envelopes (collection, bounded collection, detail).
import type { ServerResponse } from 'node:http';

export interface Meta { locale: string; request_id: string }
export interface Pagination { limit: number; has_more: boolean; next_cursor: string | null }

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export const collection = (data: unknown[], pagination: Pagination, meta: Meta) => ({ data, pagination, meta });
export const bounded = (data: unknown[], meta: Meta) => ({ data, meta });
export const detail = (data: unknown, meta: Meta) => ({ data, meta });
