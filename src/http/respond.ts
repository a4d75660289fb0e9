// JSON responses and the spec's envelopes (collection, bounded collection, detail), compressed when the client asks.
import type { ServerResponse } from 'node:http';
import { brotliCompressSync, gzipSync, constants as zlibConstants } from 'node:zlib';

export interface Meta {
  locale: string;
  request_id: string;
}
export interface Pagination {
  limit: number;
  has_more: boolean;
  next_cursor: string | null;
}

/** A body that is already JSON text (pre-serialised in the snapshot or built by the envelope helpers below). */
export class JsonText {
  /** Compressed forms of a body that is served many times (the OpenAPI document), made once each. */
  readonly encoded?: Map<Coding, Buffer>;
  constructor(
    readonly text: string,
    opts: { reused?: boolean } = {},
  ) {
    if (opts.reused) this.encoded = new Map();
  }
}

export type Coding = 'br' | 'gzip';
/** Bodies below this size go uncompressed: a detail (~1.4 KB) is compressed, an error envelope is not. */
export const COMPRESS_MIN_BYTES = 1024;
/** Entries of Accept-Encoding looked at (empty ones not counted); node already caps the header section at 16 KB. */
const MAX_CODINGS = 16;
/**
 * One entry: a coding and an optional weight. Case-insensitive ("GZip;Q=0.5"); a decimal weight of up
 * to 5 + 5 digits is read, one above 1 refuses. Every part has one way to match (no nested or adjacent
 * alternatives over the same characters), so a long run of digits is rejected in linear time: the header
 * reaches the public OpenAPI document from anyone.
 */
const CODING = /^([a-z0-9!#$%&'*+.^_`|~-]+)[ \t]*(?:;[ \t]*q[ \t]*=[ \t]*(\d{1,5}(?:\.\d{0,5})?|\.\d{1,5})[ \t]*)?$/i;

/**
 * The content coding to answer with for an Accept-Encoding header (RFC 9110, 12.5.3): gzip or br,
 * the one with the higher weight, gzip on a tie (br at a cost we can afford, quality 4, was no smaller
 * on our JSON: 3 % on a page of 20, larger on a page of 100); null for the body as it is. `*` stands
 * for any coding the header does not name, `q=0` refuses one, `x-gzip` is gzip (RFC 9110, 8.4.1.3),
 * and an `identity` weighted above both keeps the body as it is. An entry that does not parse
 * (`gzip;q=abc`, `gzip;level=9`) counts as refused rather than failing the request; of a coding named
 * twice the first counts.
 */
export function negotiate(header: string | undefined): Coding | null {
  if (!header) return null;
  const q = new Map<string, number>();
  let entries = 0;
  for (let start = 0; start <= header.length && entries < MAX_CODINGS; ) {
    let end = header.indexOf(',', start);
    if (end === -1) end = header.length;
    const item = header.slice(start, end).trim();
    start = end + 1;
    if (item === '') continue;
    entries++;
    const m = CODING.exec(item);
    const named = (m ? m[1] : item.split(';', 1)[0].trim()).toLowerCase();
    const name = named === 'x-gzip' ? 'gzip' : named;
    const w = m ? (m[2] === undefined ? 1 : Number(m[2])) : 0;
    if (!q.has(name)) q.set(name, w <= 1 ? w : 0);
  }
  const any = q.get('*');
  const gzip = q.get('gzip') ?? any ?? 0,
    br = q.get('br') ?? any ?? 0;
  const best = Math.max(gzip, br);
  if (best <= 0) return null;
  if ((q.get('identity') ?? -1) > best) return null; // not named: below any coding the client asks for
  return gzip >= br ? 'gzip' : 'br';
}

const compress = (text: string, coding: Coding): Buffer =>
  coding === 'br'
    ? // Quality 4: the default, 11, takes ~100 ms for a page of 100 listings.
      brotliCompressSync(text, {
        params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: text.length },
      })
    : gzipSync(text);

/**
 * Response headers collected while a request is handled (request id, rate-limit state, CORS, HSTS)
 * and written in one writeHead with the response's own headers. Node's setHeader validates and stores
 * each header in a map, and writeHead then merges and validates them again; one flat array skips that
 * (docs/performance.md). A header set with res.setHeader elsewhere is still merged.
 */
type WithHeaders = ServerResponse & { pending?: (string | number)[] };
/**
 * Headers as a flat list, name then value. The hot paths build their headers this way: an object of headers
 * made with a spread and then extended, and read back with for-in, took V8's slow paths (defining properties
 * on the copy, enumerating its keys): ~7 % of a small answer's CPU.
 */
export type HeaderList = (string | number)[];

export function addHeader(res: ServerResponse, name: string, value: string): void {
  const r = res as WithHeaders;
  (r.pending ??= []).push(name, value);
}

/**
 * writeHead with the collected headers followed by `headers`. A `Vary` in both (CORS's Origin, the
 * coding's Accept-Encoding) becomes one line: some clients and caches read only the first of two.
 */
export function writeHead(
  res: ServerResponse,
  status: number,
  headers: Record<string, string | number> | HeaderList,
): void {
  const all = (res as WithHeaders).pending?.slice() ?? [];
  const add = (k: string, v: string | number) => {
    const at = k === 'Vary' ? all.indexOf('Vary') : -1;
    if (at !== -1 && at % 2 === 0) all[at + 1] = `${all[at + 1]}, ${v}`;
    else all.push(k, v);
  };
  if (Array.isArray(headers)) for (let i = 0; i < headers.length; i += 2) add(headers[i] as string, headers[i + 1]);
  else for (const k in headers) add(k, headers[k]);
  res.writeHead(status, all as unknown as string[]);
}

/**
 * Writes a JSON body, compressed with br or gzip when the request accepts one and the body is at least
 * COMPRESS_MIN_BYTES long. Every response sent here says `Vary: Accept-Encoding`, compressed or not.
 */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> | HeaderList = [],
): void {
  const text = body instanceof JsonText ? body.text : JSON.stringify(body);
  // UTF-16 units never outnumber UTF-8 bytes, so a text under the minimum is a body under it.
  const coding = text.length < COMPRESS_MIN_BYTES ? null : negotiate(res.req?.headers['accept-encoding']);
  // A list given is this response's own (the caller made it for it): the rest is added to it.
  const out: HeaderList = Array.isArray(headers) ? headers : Object.entries(headers).flat();
  out.push('Vary', 'Accept-Encoding');
  let payload: string | Buffer = text;
  if (coding !== null) {
    const cache = body instanceof JsonText ? body.encoded : undefined;
    payload = cache?.get(coding) ?? compress(text, coding);
    cache?.set(coding, payload);
    out.push('Content-Encoding', coding);
  }
  out.push(
    'Content-Type',
    'application/json; charset=utf-8',
    'Content-Length',
    typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length,
  );
  writeHead(res, status, out);
  res.end(payload);
}

export const collection = (data: unknown[], pagination: Pagination, meta: Meta) => ({ data, pagination, meta });
export const bounded = (data: unknown[], meta: Meta) => ({ data, meta });
export const detail = (data: unknown, meta: Meta) => ({ data, meta });

// The same envelopes around items that are JSON text already (or one string of them joined by commas); field
// order as above.
const joined = (items: string[] | string) => (typeof items === 'string' ? items : items.join(','));
export const collectionJson = (items: string[] | string, pagination: Pagination, meta: Meta) =>
  new JsonText(`{"data":[${joined(items)}],"pagination":${JSON.stringify(pagination)},"meta":${JSON.stringify(meta)}}`);
export const boundedJson = (items: string[] | string, meta: Meta) =>
  new JsonText(`{"data":[${joined(items)}],"meta":${JSON.stringify(meta)}}`);
export const detailJson = (data: string, meta: Meta) => new JsonText(`{"data":${data},"meta":${JSON.stringify(meta)}}`);
