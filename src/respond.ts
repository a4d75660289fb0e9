// JSON responses and the spec's envelopes (collection, bounded collection, detail).
import type { ServerResponse } from 'node:http';

export interface Meta { locale: string; request_id: string }
export interface Pagination { limit: number; has_more: boolean; next_cursor: string | null }

/** A body that is already JSON text (pre-serialised in the snapshot or built by the envelope helpers below). */
export class JsonText {
  constructor(readonly text: string) {}
}

/**
 * Response headers collected while a request is handled (request id, rate-limit state, CORS, HSTS)
 * and written in one writeHead with the response's own headers. Node's setHeader validates and stores
 * each header in a map, and writeHead then merges and validates them again; one flat array skips that
 * (measured ~15 µs a request on this VM). A header set with res.setHeader elsewhere is still merged.
 */
type WithHeaders = ServerResponse & { pending?: (string | number)[] };

export function addHeader(res: ServerResponse, name: string, value: string): void {
  const r = res as WithHeaders;
  (r.pending ??= []).push(name, value);
}

/** writeHead with the collected headers followed by `headers`. */
export function writeHead(res: ServerResponse, status: number, headers: Record<string, string | number>): void {
  const all = (res as WithHeaders).pending?.slice() ?? [];
  for (const k in headers) all.push(k, headers[k]);
  res.writeHead(status, all as unknown as string[]);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = body instanceof JsonText ? body.text : JSON.stringify(body);
  writeHead(res, status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export const collection = (data: unknown[], pagination: Pagination, meta: Meta) => ({ data, pagination, meta });
export const bounded = (data: unknown[], meta: Meta) => ({ data, meta });
export const detail = (data: unknown, meta: Meta) => ({ data, meta });

// The same envelopes around items that are JSON text already; field order as above.
export const collectionJson = (items: string[], pagination: Pagination, meta: Meta) =>
  new JsonText(`{"data":[${items.join(',')}],"pagination":${JSON.stringify(pagination)},"meta":${JSON.stringify(meta)}}`);
export const boundedJson = (items: string[], meta: Meta) => new JsonText(`{"data":[${items.join(',')}],"meta":${JSON.stringify(meta)}}`);
export const detailJson = (data: string, meta: Meta) => new JsonText(`{"data":${data},"meta":${JSON.stringify(meta)}}`);
