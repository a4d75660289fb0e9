// The process log's line format: one JSON object per line, "time" first, then the line's own fields, then the
// process's fields (a cluster worker's), for lines written at once and for buffered request lines.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { stdoutLog } from '../src/log.ts';

function capture() {
  const chunks: string[] = [];
  const out = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { out, lines: () => chunks.join('').split('\n').filter(Boolean) };
}

describe('stdoutLog', () => {
  it('writes a line as JSON with the time first and every field kept', () => {
    const { out, lines } = capture();
    const { log } = stdoutLog(out);
    log({ level: 'info', msg: 'a "quoted" \n text', n: 3, nothing: null });
    const [line] = lines();
    assert.match(line, /^\{"time":"\d{4}-\d\d-\d\dT[\d:.]+Z","level":"info",/);
    const parsed = JSON.parse(line);
    assert.deepEqual(Object.keys(parsed), ['time', 'level', 'msg', 'n', 'nothing']);
    assert.equal(parsed.msg, 'a "quoted" \n text');
  });
  it('writes an empty line as an object with the time only, and adds the process fields after the line', () => {
    const { out, lines } = capture();
    stdoutLog(out).log({});
    const w = capture();
    const worker = stdoutLog(w.out, { fields: { worker: 2, pid: 77 } });
    worker.log({});
    worker.log({ level: 'warn' });
    assert.deepEqual(Object.keys(JSON.parse(lines()[0])), ['time']);
    const [empty, warn] = w.lines().map((l) => JSON.parse(l));
    assert.deepEqual(Object.keys(empty), ['time', 'worker', 'pid']);
    assert.deepEqual(warn.level, 'warn');
    assert.deepEqual(Object.keys(warn), ['time', 'level', 'worker', 'pid']);
  });
  it('buffers request lines and writes them, in order, before the next line written at once', () => {
    const { out, lines } = capture();
    const { log, requestLog } = stdoutLog(out, { fields: {} });
    requestLog({ status: 200 });
    requestLog({ status: 404 });
    assert.equal(lines().length, 0);
    log({ level: 'info', msg: 'after' });
    assert.deepEqual(
      lines().map((l) => JSON.parse(l).status ?? JSON.parse(l).msg),
      [200, 404, 'after'],
    );
  });
});
