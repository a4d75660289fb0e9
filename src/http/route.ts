// What a route is: its definition (path, schema, handler, documentation), the context a handler gets, the app's dependencies.
import type { ServerResponse } from 'node:http';
import type { Request } from 'polka';
import type { Log } from '../log.ts';
import type { Snapshot, SnapshotSource } from '../snapshot/source.ts';
import type { CursorCodec } from './cursor.ts';
import type { Metrics } from './metrics.ts';
import type { QuerySchema } from './params.ts';
import type { Meta } from './respond.ts';

/** A request as polka hands it to a route (path, search and params set), with what the app adds. */
export interface Req extends Request {
  id: string;
  /** Set by access control: the authenticated key's id (never the key). */
  keyId?: string;
  /** The matched route's pattern (the metrics' route label). */
  route?: string;
  /** performance.now() when the request arrived (the log line's ms). */
  started: number;
}

/** What a public route's handler gets: validated query and path ids, the envelope meta. */
export interface PublicCtx<Q = any> {
  req: Req;
  res: ServerResponse;
  query: Q;
  params: Record<string, string>;
  meta: Meta;
  deps: AppDeps;
}

/** What a data route's handler gets: a public route's context and the snapshot it answers from. */
export interface Ctx<Q = any> extends PublicCtx<Q> {
  snap: Snapshot;
}

/** The envelope of a 200; 'raw': the handler writes the whole response itself (status, headers, body). */
export type ResponseKind = 'collection' | 'bounded' | 'detail' | 'plain' | 'raw';
interface RouteBase {
  path: string; // pattern, e.g. /v1/listings/:id (a :name is one path segment)
  summary: string;
  description?: string;
  tag: string;
  query: QuerySchema;
  kind: ResponseKind;
  /** JSON schema of one data item (collections) or of data (detail) or of the body (plain). */
  item: Record<string, unknown>;
  /** What the path's id names, as its 404 says it ("listing": "No public listing was found with this id."). */
  record?: string;
  /** Not part of the API's description (the docs page and its assets). */
  hidden?: boolean;
  /** Members the route's meta adds to the shared ones (locale, request_id), for the OpenAPI document. */
  meta?: { schema: Record<string, unknown>; example: Record<string, unknown> };
}
/** A route answered from the snapshot: behind the key check, with the snapshot's headers and an ETag. */
export interface DataRoute<Q = any> extends RouteBase {
  public?: false;
  handle(ctx: Ctx<Q>): unknown;
}
/** A route open to everyone that reads no snapshot (ping, health, the docs page, the OpenAPI document). */
export interface PublicRoute<Q = any> extends RouteBase {
  public: true;
  handle(ctx: PublicCtx<Q>): unknown;
}
export type RouteDef<Q = any> = DataRoute<Q> | PublicRoute<Q>;

export function defineRoute<Q>(r: DataRoute<Q>): DataRoute<Q> {
  return r;
}
export function definePublicRoute<Q>(r: PublicRoute<Q>): PublicRoute<Q> {
  return r;
}

/**
 * A route path as polka matches it: an exact, case-sensitive regex (polka's string patterns ignore case), its
 * literal parts escaped (the `.` of openapi.json is a dot), each `:name` one path segment captured as a named
 * group (polka's req.params), one optional trailing slash.
 */
export function patternOf(path: string): RegExp {
  const source = path
    .split(/(:[a-z_]+)/)
    .map((part) => (part.startsWith(':') ? `(?<${part.slice(1)}>[^/]+)` : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}/?$`);
}

/** The first `:name` of `route` whose segment of `path` (which the route matches) is not percent-encoded UTF-8, or null. */
export function undecodableParam(route: string, path: string): string | null {
  if (!path.includes('%')) return null;
  const segments = path.split('/');
  const parts = route.split('/');
  for (let i = 0; i < parts.length; i++) {
    if (!parts[i].startsWith(':') || !segments[i].includes('%')) continue;
    try {
      decodeURIComponent(segments[i]);
    } catch {
      return parts[i].slice(1);
    }
  }
  return null;
}

/**
 * The access-control step (./guard.ts), run once the route is known: it may answer the request itself
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
