// Benchmark-only: the bare stack's listing detail, for npm run bench:stack. node:http and better-sqlite3 with the
// service's own detail statement and city names (src/routes/support/listing-text.ts) on the snapshot at SNAPSHOT_PATH, and
// nothing else: no key check, rate limit, request log, metrics, ETag, query validation or error envelope. What the
// service spends beyond this is what its features cost. With STACK_HEADERS it also writes the service's headers.
//   SNAPSHOT_PATH=… node stack-server.mjs   → stdout {"ready":"http://127.0.0.1:PORT"}; exits when stdin ends
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { detailText, prepareText } from '../src/routes/support/listing-text.ts';

const db = new Database(process.env.SNAPSHOT_PATH!, { readonly: true, fileMustExist: true });
db.pragma('mmap_size = 0');
db.pragma('locking_mode = EXCLUSIVE');
const text = prepareText(db);
/** STACK_HEADERS: a JSON list of [name, value] written on every answer (the service's), besides its own two. */
const extra = process.env.STACK_HEADERS ? (JSON.parse(process.env.STACK_HEADERS) as [string, string][]).flat() : null;
const DETAIL = /^\/v1\/listings\/([^/?]+)$/;
const server = createServer((req, res) => {
  const m = DETAIL.exec(req.url ?? '');
  const data = m === null ? undefined : detailText(text, decodeURIComponent(m[1]), 'en')?.json;
  const id = randomUUID();
  const body = `{"data":${data ?? 'null'},"meta":{"locale":"en","request_id":"${id}"}}`;
  const status = data === undefined ? 404 : 200;
  const length = String(Buffer.byteLength(body));
  if (extra === null)
    res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': length });
  else res.writeHead(status, [...extra, 'X-Request-Id', id, 'Content-Length', length]);
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ ready: `http://127.0.0.1:${port}` })}\n`);
});
process.stdin.on('end', () => process.exit(0)); // never outlive the bench
process.stdin.resume();
