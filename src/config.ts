// The environment, validated once: each setting has a name, a default and a one-line help text.
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import * as v from 'valibot';

const port = v.pipe(
  v.string(),
  v.regex(/^\d+$/, 'must be a port number'),
  v.transform(Number),
  v.minValue(0, 'must be 0-65535'),
  v.maxValue(65535, 'must be 0-65535'),
);
const positiveInt = v.pipe(
  v.string(),
  v.regex(/^\d+$/, 'must be a positive integer'),
  v.transform(Number),
  v.minValue(1, 'must be at least 1'),
);
const count = v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number (0 or more)'), v.transform(Number));
const httpUrl = v.pipe(
  v.string(),
  v.check((s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
    } catch {
      return false;
    }
  }, "must be an http:// or https:// URL (of a publication folder's latest.json)"),
);
const flag = v.pipe(
  v.picklist(['0', '1', 'true', 'false'], 'must be 0 or 1'),
  v.transform((s) => s === '1' || s === 'true'),
);
const text = v.pipe(v.string(), v.minLength(1, 'must not be empty'));
/** A redis:// or rediss:// URL with a host; it may hold a password, so it is never echoed (see redactUrl). */
const redisUrl = v.pipe(
  v.string(),
  v.check((s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'redis:' || u.protocol === 'rediss:') && u.hostname !== '' && /^\/?\d*$/.test(u.pathname);
    } catch {
      return false;
    }
  }, 'must be a URL like redis://[:password@]host[:port][/db] or rediss://… (TLS)'),
);
const origin = v.pipe(
  v.string(),
  v.regex(/^https?:\/\/[^/\s]+$/, 'must be an origin like https://playground.example.com'),
);

export const SETTINGS = {
  HOST: { schema: text, default: '127.0.0.1', help: 'Address to listen on.' },
  PORT: { schema: port, default: '8080', help: 'Port to listen on (0 picks a free port).' },
  SNAPSHOT_PATH: {
    schema: text,
    default: 'data/snapshot.db',
    help: 'The snapshot file to serve (built with npm run build-snapshot).',
  },
  SNAPSHOT_CHECK_MS: {
    schema: positiveInt,
    default: '1000',
    help: 'How often the snapshot file is checked for a replacement, in ms.',
  },
  SNAPSHOT_FOLLOW: {
    schema: v.optional(httpUrl),
    default: undefined,
    secret: true,
    help: 'Follow a publication: the URL of its latest.json (http or https); new snapshots are downloaded, verified with SNAPSHOT_FOLLOW_PUBLIC_KEY and swapped in. Unset: only SNAPSHOT_PATH is watched.',
  },
  SNAPSHOT_FOLLOW_PUBLIC_KEY: {
    schema: v.optional(text),
    default: undefined,
    help: "The publisher's minisign public key: a file (minisign.pub) or the key itself (RW…). Needed with SNAPSHOT_FOLLOW.",
  },
  SNAPSHOT_FOLLOW_INTERVAL_MS: {
    schema: positiveInt,
    default: '60000',
    help: 'How often latest.json is checked (a conditional request), in ms.',
  },
  SNAPSHOT_FOLLOW_HEADER: {
    schema: v.optional(
      v.pipe(v.string(), v.regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+:[ \t]*\S.*$/, 'must be one header, "Name: value"')),
    ),
    default: undefined,
    secret: true,
    help: 'One request header sent with every download from the publication\'s origin, for a private bucket or CDN ("Authorization: Bearer …"); never logged.',
  },
  SNAPSHOT_FOLLOW_STALE_MS: {
    schema: positiveInt,
    default: '3600000',
    help: 'With no successful check for this long (or once the served publication has expired), /readyz says stale (still 200) and nlr_follow_stale is 1.',
  },
  SNAPSHOT_FOLLOW_SPREAD_MS: {
    schema: count,
    default: '30000',
    help: 'Replicas spread their swaps over this window: each waits a delay derived from SNAPSHOT_FOLLOW_INSTANCE (the same replica first each time: a canary); 0: no wait.',
  },
  SNAPSHOT_FOLLOW_INSTANCE: {
    schema: v.optional(text),
    default: undefined,
    help: "The name the spread delay is derived from; unset: the host's name (a pod's name in Kubernetes).",
  },
  CURSOR_SECRET: {
    schema: v.optional(v.pipe(v.string(), v.minLength(16, 'must be at least 16 characters'))),
    default: undefined,
    secret: true,
    help: 'HMAC secret for paging cursors (at least 16 characters); unset, a random one per process (cursors then end with a restart).',
  },
  KEYS_PATH: { schema: text, default: 'data/keys.db', help: 'The API key store (written by npm run keys).' },
  RATE_LIMIT_PER_MINUTE: { schema: positiveInt, default: '600', help: 'Requests per minute per API key.' },
  MAX_CONNECTIONS: {
    schema: positiveInt,
    default: '1000',
    help: 'Open connections at most (per listener); beyond it new connections are closed at once.',
  },
  AUTH_FAILURES_PER_MINUTE: {
    schema: positiveInt,
    default: '30',
    help: 'Failed authentications per minute per client address before 429.',
  },
  TLS_CERT_PATH: {
    schema: v.optional(text),
    default: undefined,
    help: 'PEM certificate: serve HTTPS directly (with TLS_KEY_PATH).',
  },
  TLS_KEY_PATH: { schema: v.optional(text), default: undefined, help: 'PEM private key for TLS_CERT_PATH.' },
  HTTP_REDIRECT_PORT: {
    schema: v.optional(port),
    default: undefined,
    help: 'Also listen for plain HTTP on this port and redirect (308) to HTTPS.',
  },
  TRUST_PROXY: {
    schema: flag,
    default: '0',
    help: 'Behind a TLS-terminating proxy: honour X-Forwarded-Proto and X-Forwarded-For.',
  },
  PLAYGROUND_ORIGIN: {
    schema: v.optional(origin),
    default: undefined,
    help: 'The one browser origin allowed cross-origin access (CORS).',
  },
  DEV_KEY: {
    schema: flag,
    default: '1',
    help: 'On start, create and print one local development key when the key store is empty.',
  },
  LOG_REQUESTS: {
    schema: flag,
    default: '1',
    help: 'Log one JSON line per request to stdout (batched: written within 50 ms and at exit).',
  },
  METRICS_PORT: {
    schema: v.optional(port),
    default: undefined,
    help: 'Serve Prometheus metrics at /metrics on this port (its own listener, never the public one); unset: off.',
  },
  METRICS_HOST: { schema: text, default: '127.0.0.1', help: 'Address of the metrics listener.' },
  WORKERS: {
    schema: positiveInt,
    default: String(availableParallelism()),
    help: 'Processes serving the port (node:cluster): default one per core; 1 runs a single process without a primary.',
  },
  REDIS_URL: {
    schema: v.optional(redisUrl),
    default: undefined,
    secret: true,
    help: 'Redis for several replicas: API keys and rate-limit counters live there (redis://[:password@]host:port[/db]); unset: the key store file and counters in memory.',
  },
  REDIS_PREFIX: {
    schema: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be 1-64 of A-Z a-z 0-9 _ . : -')),
    default: 'nlr:',
    help: 'Prefix of every Redis key this service reads or writes.',
  },
  DRAIN_TIMEOUT_MS: {
    schema: positiveInt,
    default: '10000',
    help: 'On SIGTERM/SIGINT, how long in-flight requests may take to finish before the process exits anyway.',
  },
} as const;

type Settings = typeof SETTINGS;
export type Config = { [K in keyof Settings]: v.InferOutput<Settings[K]['schema']> };

export class ConfigError extends Error {}

/** Reads and validates the named settings; the first bad one throws with a one-line message naming it. */
export function loadSettings<K extends keyof Settings>(
  env: Record<string, string | undefined>,
  names: K[],
): Pick<Config, K> {
  const out: Record<string, unknown> = {};
  for (const name of names) {
    const s = SETTINGS[name];
    const raw = env[name] === '' ? undefined : (env[name] ?? s.default);
    const r = v.safeParse(s.schema as v.GenericSchema, raw);
    if (!r.success) {
      // A secret setting (a URL with a password) is never echoed, not even when it is wrong.
      if (env[name] === '') throw new ConfigError(`${name}: is set but empty; give it a value or unset it`);
      const got = 'secret' in s ? '' : ` (got ${JSON.stringify(env[name])})`;
      throw new ConfigError(`${name}: ${r.issues[0].message}${got}`);
    }
    out[name] = r.output;
  }
  return out as Pick<Config, K>;
}

/** Reads and validates every setting; the first bad one throws with a one-line message naming it. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const c = loadSettings(env, Object.keys(SETTINGS) as (keyof Settings)[]) as Config;
  if (!!c.TLS_CERT_PATH !== !!c.TLS_KEY_PATH)
    throw new ConfigError('TLS_CERT_PATH and TLS_KEY_PATH: set both or neither');
  if (c.SNAPSHOT_FOLLOW !== undefined && c.SNAPSHOT_FOLLOW_PUBLIC_KEY === undefined)
    throw new ConfigError(
      "SNAPSHOT_FOLLOW_PUBLIC_KEY: needed with SNAPSHOT_FOLLOW (the publisher's minisign public key, a file or the key)",
    );
  if (c.HTTP_REDIRECT_PORT !== undefined && !c.TLS_CERT_PATH)
    throw new ConfigError(
      'HTTP_REDIRECT_PORT: needs TLS_CERT_PATH and TLS_KEY_PATH (there is no HTTPS to redirect to)',
    );
  return c;
}

/** A URL fit for logs: its password (and user name) replaced by ***. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '' || u.username !== '') {
      u.username = u.username === '' ? '' : '***';
      u.password = u.password === '' ? '' : '***';
    }
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/**
 * The secret paging cursors are signed with: CURSOR_SECRET, or when it is unset a random one of this process (the
 * cluster's primary makes it once for every worker), with the warning logged. There is no built-in default: a
 * secret written in the source would let anyone forge cursors (any position, no expiry).
 */
export function cursorSecretOf(config: Pick<Config, 'CURSOR_SECRET'>, log: (line: Record<string, unknown>) => void) {
  if (config.CURSOR_SECRET !== undefined) return config.CURSOR_SECRET;
  log({ level: 'warn', msg: CURSOR_SECRET_WARNING });
  return randomBytes(32).toString('base64url');
}

export const CURSOR_SECRET_WARNING =
  'CURSOR_SECRET is not set: paging cursors are signed with a random secret of this process, so they stop working when it restarts and are not accepted by other instances; set CURSOR_SECRET to a long random value';

/** Whether HOST is a loopback address (the development key and the plain-HTTP warning depend on it). */
export const isLoopback = (host: string) => host === 'localhost' || host === '::1' || /^127\./.test(host);
