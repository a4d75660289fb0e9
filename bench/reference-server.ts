// Benchmark-only reference: a bare node:http server that answers each captured URL with the exact status, headers
// and body bytes our server returned for it (one Map lookup, one write). The ceiling our server is compared with.
//   node --import tsx bench/reference-server.ts [CAPTURE.json]   → stdout {"ready":"http://127.0.0.1:PORT"}
//   stdin "load CAPTURE.json\n"  replaces what it answers (one scenario's requests) → stdout {"loaded":N}
// CAPTURE.json: [{ url, status, headers: [[name, value], …], body_base64 }]; PORT from the environment (0 = free port).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';

interface Captured {
  url: string;
  status: number;
  headers: [string, string][];
  body_base64: string;
}
const read = (file: string) =>
  new Map(
    (JSON.parse(readFileSync(file, 'utf8')) as Captured[]).map((e) => [
      e.url,
      { status: e.status, headers: e.headers.flat(), body: Buffer.from(e.body_base64, 'base64') },
    ]),
  );
let byUrl: ReturnType<typeof read> = process.argv[2] ? read(process.argv[2]) : new Map();
const missing = Buffer.from('{"error":{"code":"not_found","message":"not captured","request_id":"-"}}');

const server = createServer(
  { headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 2_000, keepAliveTimeout: 65_000 },
  (req, res) => {
    const r = byUrl.get(req.url ?? '');
    if (!r) {
      res.writeHead(404, { 'Content-Type': 'application/json', 'Content-Length': missing.length });
      res.end(missing);
      return;
    }
    res.writeHead(r.status, r.headers);
    res.end(r.body);
  },
);
// The same connection settings as src/service/server.ts (TIMEOUTS there).
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ ready: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, pid: process.pid })}\n`,
  );
});
process.on('SIGTERM', () => process.exit(0));
process.stdin.on('end', () => process.exit(0));
createInterface({ input: process.stdin }).on('line', (line) => {
  if (!line.startsWith('load ')) return;
  byUrl = read(line.slice(5));
  process.stdout.write(`${JSON.stringify({ loaded: byUrl.size })}\n`);
});
