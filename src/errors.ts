// The API's error codes and the domain's failures, in words with no HTTP in them: http/errors.ts gives each a status.

/** The closed set of error codes a client can see (the envelope's error.code). */
export const ERROR_CODES = [
  'invalid_request',
  'unauthorized',
  'not_found',
  'method_not_allowed',
  'request_timeout',
  'request_too_large',
  'rate_limited',
  'internal_error',
  'service_unavailable',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * What a request needs and may find unusable: the served snapshot, the key store (a file or Redis), the rate
 * limiter (a cluster's primary, or Redis), and the data store under a prepared statement (SQLite busy or damaged).
 */
export type Dependency = 'snapshot' | 'key_store' | 'rate_limiter' | 'data_store';

/**
 * A dependency cannot be used now: the request fails closed. Domain modules throw it (or reject with it) in
 * their own terms; the HTTP layer answers it from one table (http/errors.ts UNAVAILABLE).
 */
export class DependencyUnavailable extends Error {
  constructor(
    readonly dependency: Dependency,
    detail = `${dependency} unavailable`,
  ) {
    super(detail);
    this.name = 'DependencyUnavailable';
  }
}

/** No valid snapshot to serve: none was opened, or the served file was changed in place. */
export class SnapshotUnavailable extends DependencyUnavailable {
  constructor(detail?: string) {
    super('snapshot', detail);
  }
}

/** The key store cannot be read now (missing, locked, unreadable, or Redis unreachable). */
export class KeyStoreUnavailable extends DependencyUnavailable {
  constructor(detail?: string) {
    super('key_store', detail);
  }
}

/** The counters of the rate limits cannot be asked (the cluster's primary did not answer in time). */
export class LimiterUnavailable extends DependencyUnavailable {
  constructor(detail?: string) {
    super('rate_limiter', detail);
  }
}
