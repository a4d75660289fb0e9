// HTTP/1.1 as bytes on a socket: for requests fetch cannot send (two Host lines, a bad method, pipelining, a header
// that never ends) and answers it would hide (the exact head, what follows a closing answer).
import assert from 'node:assert/strict';
import { connect } from 'node:net';

/**
 * Opens a connection, writes `text` (latin1: one char, one byte) and resolves with everything the server sent
 * (latin1, so Content-Length counts characters) once it closes, and after how long; fails after `within` ms.
 */
export const raw = (url: string, text: string, within = 10_000) =>
  new Promise<{ data: string; ms: number }>((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const t0 = Date.now();
    let data = '';
    const s = connect(Number(port), hostname, () => s.write(text, 'latin1'));
    s.on('data', (d) => {
      data += d.toString('latin1');
    });
    s.on('close', () => resolve({ data, ms: Date.now() - t0 }));
    s.on('error', () => {
      /* a reset also ends it */
    });
    setTimeout(() => {
      s.destroy();
      reject(new Error(`still open after ${within} ms`));
    }, within).unref();
  });

export interface RawAnswer {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string;
}

/** The responses in a raw HTTP/1.1 byte stream: status, headers and body (by Content-Length). */
export function responses(data: string): RawAnswer[] {
  const out = [];
  let rest = data;
  while (rest.length) {
    const end = rest.indexOf('\r\n\r\n');
    assert.ok(end > 0, `a complete response head in ${JSON.stringify(rest.slice(0, 200))}`);
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
    const length = Number(headers['content-length'] ?? 0);
    out.push({ status: Number(statusLine.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

/** The answers on one connection that sent `text`. */
export const exchange = async (url: string, text: string, within?: number) =>
  responses((await raw(url, text, within)).data);

/** An error answer as the spec has it: the envelope, its request id also in X-Request-Id. */
export function assertEnvelope(r: RawAnswer, status: number, code: string) {
  assert.equal(r.status, status, r.body);
  assert.match(r.headers['content-type'], /^application\/json/);
  const body = JSON.parse(r.body);
  assert.deepEqual(Object.keys(body.error), ['code', 'message', 'request_id']);
  assert.equal(body.error.code, code);
  assert.ok(body.error.message.length > 0);
  assert.equal(r.headers['x-request-id'], body.error.request_id);
  return body.error as { code: string; message: string; request_id: string };
}
