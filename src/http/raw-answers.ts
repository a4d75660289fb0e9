// Answers written straight to a connection, outside the app: requests node's HTTP parser rejected, and CONNECT.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, clientErrorResponse, notAllowedMessage, rawErrorResponse } from './errors.ts';
import type { AppDeps } from './route.ts';

/**
 * The server's 'clientError' listener: a request node's HTTP parser rejected (see clientErrorResponse)
 * is answered with the error envelope and a request id, logged, and the connection closed. When earlier
 * requests of the same connection (pipelined) are still being answered, the error follows their
 * responses instead of cutting into them; node's own handler wrote its bare 400 at once and then closed
 * the connection, losing them.
 */
export function clientErrorHandler(
  deps: Pick<AppDeps, 'log' | 'requestLog' | 'logRequests'>,
  lastResponse: LastResponse,
) {
  return (err: Error & { code?: string }, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const head = rejectedHead(err, socket, lastResponse(socket));
    answerLast(socket, lastResponse, (id, tls) => clientErrorResponse(err, id, tls, head), deps, { error: err.code });
  };
}

/**
 * Whether the request the parser rejected is a HEAD, whose answer has no body (RFC 9110, 9.3.2). Node gives the
 * packet it was parsing (err.rawPacket: one read from the connection). Pipelined requests sent in one write share
 * a packet: a request's read is told by the connection's byte count when it arrived (trackingResponses), so the
 * requests of this packet answered before the rejected one are skipped (each a head up to its blank line, and its
 * Content-Length or chunked body: node parsed them, so they are well formed) to find its method. A request that
 * began in an earlier read than the one rejected (a head sent in several writes) cannot be seen there: its answer
 * carries the body, as a GET's must (a GET client would wait for a missing body, while a HEAD client given one
 * only sees bytes before the connection closes).
 */
function rejectedHead(err: Error & { rawPacket?: Buffer }, socket: Duplex, last: Last | undefined): boolean {
  const packet = err.rawPacket;
  if (packet === undefined) return false;
  const at = last !== undefined && last.bytesRead === bytesRead(socket) ? afterRequests(packet, last.inPacket) : 0;
  if (at < 0) return false;
  let start = at;
  while (packet[start] === 0x0d || packet[start] === 0x0a) start++; // empty lines between requests
  return packet.subarray(start, start + 5).toString('latin1') === 'HEAD ';
}

/** Where the packet's request after its first `n` starts, or -1 when they do not end in it. */
function afterRequests(packet: Buffer, n: number): number {
  let at = 0;
  for (let i = 0; i < n && at >= 0; i++) {
    const end = packet.indexOf('\r\n\r\n', at, 'latin1');
    if (end < 0) return -1;
    const head = packet.subarray(at, end).toString('latin1');
    const coding = /\r\ntransfer-encoding:([^\r]*)/i.exec(head);
    const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
    if (coding) at = /chunked[ \t]*$/i.test(coding[1]) ? afterChunks(packet, end + 4) : -1;
    else at = end + 4 + (length ? Number(length[1]) : 0);
  }
  return at;
}

/** Where a chunked body beginning at `at` ends (its last chunk, trailer fields and blank line), or -1 past the packet. */
function afterChunks(packet: Buffer, at: number): number {
  for (let line = at; ; ) {
    const eol = packet.indexOf('\r\n', line, 'latin1');
    if (eol < 0) return -1;
    const size = Number.parseInt(packet.subarray(line, eol).toString('latin1'), 16); // a chunk extension is ignored
    if (Number.isNaN(size)) return -1;
    line = eol + 2 + (size > 0 ? size + 2 : 0);
    if (size > 0) continue;
    for (;;) {
      const end = packet.indexOf('\r\n', line, 'latin1'); // trailer fields, then a blank line
      if (end < 0) return -1;
      if (end === line) return end + 2;
      line = end + 2;
    }
  }
}

/** The bytes read from a connection so far (net.Socket and tls.TLSSocket count them; another Duplex: -1). */
const bytesRead = (socket: Duplex) => (socket as Duplex & { bytesRead?: number }).bytesRead ?? -1;

/**
 * The server's 'connect' listener: this API is no proxy, so a CONNECT gets the 405 every other method
 * outside GET and HEAD gets (node closed the connection without a word), and a request-log line.
 */
export function connectHandler(deps: Pick<AppDeps, 'log' | 'requestLog' | 'logRequests'>, lastResponse: LastResponse) {
  const refusal = new ApiError('method_not_allowed', notAllowedMessage('CONNECT'), { Allow: 'GET, HEAD' });
  return (_req: IncomingMessage, socket: Duplex) => {
    answerLast(socket, lastResponse, (id, tls) => rawErrorResponse(refusal, id, tls), deps, { method: 'CONNECT' });
  };
}

/**
 * A connection's last request: the response started for it (node queues the responses to pipelined requests), how
 * many bytes the connection had read when it arrived (which read it came from: rejectedHead), and how many requests
 * of that read have arrived, this one included.
 */
export interface Last {
  res: ServerResponse;
  bytesRead: number;
  inPacket: number;
}
/** The last request on a connection (see Last), or undefined before its first. */
export type LastResponse = (socket: Duplex) => Last | undefined;

/** A request listener that remembers each connection's last request and response, for answerLast and rejectedHead. */
export function trackingResponses<R extends IncomingMessage>(
  handler: (req: R, res: ServerResponse) => void,
): { handler: (req: R, res: ServerResponse) => void; lastResponse: LastResponse } {
  const latest = new WeakMap<object, Last>();
  return {
    handler: (req, res) => {
      const read = bytesRead(req.socket);
      const before = latest.get(req.socket);
      const inPacket = before !== undefined && before.bytesRead === read ? before.inPacket + 1 : 1;
      latest.set(req.socket, { res, bytesRead: read, inPacket });
      handler(req, res);
    },
    lastResponse: (socket) => latest.get(socket),
  };
}

/**
 * Writes a raw error answer on a connection after the responses to the requests before it (responses go
 * out in request order, so once the last one started has closed, all have), logs it, and closes the
 * connection. Nothing is written after a response that ends the connection (Connection: close).
 */
function answerLast(
  socket: Duplex,
  lastResponse: LastResponse,
  make: (requestId: string, tls: boolean) => { status: number; text: string },
  deps: Pick<AppDeps, 'log' | 'requestLog' | 'logRequests'>,
  logFields: Record<string, unknown>,
): void {
  const last = lastResponse(socket)?.res;
  const answer = () => {
    if (socket.writable && last?.shouldKeepAlive !== false) {
      const id = randomUUID();
      const r = make(id, (socket as Duplex & { encrypted?: boolean }).encrypted === true);
      socket.write(r.text);
      if (deps.logRequests)
        (deps.requestLog ?? deps.log)({ level: 'info', request_id: id, ...logFields, status: r.status });
    }
    socket.destroy();
  };
  if (last && !last.writableFinished && !last.destroyed) last.once('close', answer);
  else answer();
}
