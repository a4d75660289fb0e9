// The process log: one JSON line per event on stdout; request lines buffered and written in batches.
import type { Writable } from 'node:stream';

/** Where a module writes its log lines: one object, one JSON line. */
export type Log = (line: Record<string, unknown>) => void;

/** The largest write a pipe takes in one piece (POSIX PIPE_BUF on Linux): shorter writes never interleave. */
const PIPE_BUF = 4096;

/**
 * `log` writes a line at once; `requestLog` collects request lines and writes them every 50 ms (or at 64 KB):
 * one write per request costs ~7 % of the detail endpoint's throughput. Other lines flush the buffer first,
 * so the order is kept, and so does exit (stdout is synchronous for files and pipes on Linux, so nothing is
 * lost on a normal stop).
 *
 * `opts.fields` are added to every line (a cluster worker's `worker` and `pid`). `opts.shared`: other
 * processes write to the same stdout (a cluster's workers), so batches are written in pieces of whole lines
 * of at most PIPE_BUF bytes, which a pipe never interleaves with another writer's.
 */
let lastMs = 0;
let lastIso = '';
/** The time as ISO 8601, made once per millisecond: under load, several lines share one. */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

export function stdoutLog(
  out: Writable,
  opts: { fields?: Record<string, unknown>; shared?: boolean } = {},
): { log: Log; requestLog: Log } {
  const fields = JSON.stringify(opts.fields ?? {});
  const tail = fields.length > 2 ? `,${fields.slice(1)}\n` : '';
  // "time" first, then the line's fields: the line is serialised as it is, not copied into a new object first.
  // A line never has its own "time" (the service's lines do not), so the text is the same as with a spread.
  const end = tail || '}\n';
  const format = (line: Record<string, unknown>) => {
    const body = JSON.stringify(line);
    return `{"time":"${isoNow()}"${body.length > 2 ? `,${body.slice(1, -1)}` : ''}${end}`;
  };
  let buf: string[] = [];
  let bytes = 0;
  let timer: NodeJS.Timeout | null = null;
  const write = (lines: string[]) => {
    if (!opts.shared) return void out.write(lines.join(''));
    let piece = '';
    for (const l of lines) {
      if (piece.length > 0 && Buffer.byteLength(piece) + Buffer.byteLength(l) > PIPE_BUF) {
        out.write(piece);
        piece = '';
      }
      piece += l;
    }
    if (piece.length > 0) out.write(piece);
  };
  const flush = () => {
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    if (buf.length === 0) return;
    const lines = buf;
    buf = [];
    bytes = 0;
    write(lines);
  };
  const requestLog = (line: Record<string, unknown>) => {
    const text = format(line);
    buf.push(text);
    bytes += text.length;
    if (bytes >= 64 * 1024) flush();
    else if (!timer) timer = setTimeout(flush, 50).unref();
  };
  const log = (line: Record<string, unknown>) => {
    flush();
    out.write(format(line));
  };
  process.on('exit', flush);
  return { log, requestLog };
}
