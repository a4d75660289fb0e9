// What a route is: its definition (path, schema, handler, documentation), the context a handler gets, the app's dependencies.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Log } from '../log.ts';
import type { Snapshot, SnapshotSource } from '../snapshot/source.ts';
import type { CursorCodec } from './cursor.ts';
import type { Metrics } from './metrics.ts';
import type { QuerySchema } from './params.ts';
import type { Meta } from './respond.ts';

export interface Req extends IncomingMessage {
  id: string;
  path: string;
  search: string | null;
  /** Set by access control: the authenticated key's id (never the key). */
  keyId?: string;
  /** The matched route's pattern (the metrics' route label). */
  route?: string;
  /** performance.now() when the request arrived (the log line's ms). */
  started: number;
}

/** What a request handler gets: validated query and path ids, the envelope meta, the snapshot. */
export interface Ctx<Q = any> {
  req: Req;
  res: ServerResponse;
  query: Q;
  params: Record<string, string>;
  meta: Meta;
  snap: Snapshot;
  deps: AppDeps;
  /** Languages the body's translated fields were served in (bits of ./content-language.ts), gathered by the handler. */
  lang: number;
}

/** The envelope of a 200; 'raw': the handler writes the whole response itself (status, headers, body). */
export type ResponseKind = 'collection' | 'bounded' | 'detail' | 'plain' | 'raw';
export interface RouteDef<Q = any> {
  path: string; // pattern, e.g. /v1/listings/:id (a :name is one path segment)
  summary: string;
  description?: string;
  tag: string;
  query: QuerySchema;
  kind: ResponseKind;
  /** JSON schema of one data item (collections) or of data (detail) or of the body (plain). */
  item: Record<string, unknown>;
  public?: boolean;
  /** What the path's id names, as its 404 says it ("listing": "No public listing was found with this id."). */
  record?: string;
  /** Not part of the API's description (the docs page and its assets). */
  hidden?: boolean;
  /** Members the route's meta adds to the shared ones (locale, request_id), for the OpenAPI document. */
  meta?: { schema: Record<string, unknown>; example: Record<string, unknown> };
  handle(ctx: Ctx<Q>): unknown;
}

export function defineRoute<Q>(r: RouteDef<Q>): RouteDef<Q> {
  return r;
}

/**
 * The access-control step (see access.ts), run once the route is known: it may answer the request itself
 * (preflight, redirect) and return true, or throw an ApiError (401, 429, 503) or KeyStoreUnavailable (503).
 * Synchronous when the key store and the limits live in this process; a promise (rejected with the error) when
 * the counters live elsewhere (the cluster's primary, Redis) or a key waits for the key store's re-read.
 */
export type Guard = (req: Req, res: ServerResponse, route: { public: boolean }) => boolean | Promise<boolean>;

export interface AppDeps {
  snapshots: SnapshotSource;
  cursor: CursorCodec;
  log: Log;
  guard?: Guard;
  logRequests?: boolean;
  /** Where the per-request lines go (default: log). The server buffers them; everything else is written at once. */
  requestLog?: Log;
  metrics?: Metrics;
  /** Shared with the server: requests being answered, and whether the service is draining (SIGTERM). */
  lifecycle?: Lifecycle;
  /** Whether the key store can be read now (for /readyz). */
  keysReady?: () => boolean;
  /**
   * The key store is shared by every replica (Redis): /readyz reports it unavailable but stays 200, since every
   * replica would be out and there is nowhere to send the traffic; keyed requests fail closed (503) meanwhile.
   */
  keysShared?: boolean;
  /** What the shared key store persists ('aof', 'rdb', 'none', 'unknown'; null before it was asked), and a warning. */
  keysPersistence?: () => { persistence: string | null; warning: string | null };
}

export interface Lifecycle {
  draining: boolean;
  inFlight: number;
}
