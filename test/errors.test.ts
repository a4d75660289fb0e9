// sendError: a SQLite failure (damaged page, I/O error) is a 503 to the client and a logged cause for the operator.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sendError } from '../src/http/errors.ts';
import { rawServer } from './support/server.ts';

describe('sendError with a SQLite error', () => {
  it('answers 503 with Retry-After and logs the cause, at most once a second per code', async () => {
    const logs: Record<string, unknown>[] = [];
    const corrupt = Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' });
    const server = await rawServer((_req, res) => sendError(res, 'req-1', corrupt, (l) => logs.push(l)));
    try {
      for (let i = 0; i < 3; i++) {
        const res = await fetch(server.url);
        assert.equal(res.status, 503);
        assert.equal(res.headers.get('retry-after'), '1');
        const body = await res.json();
        assert.equal(body.error.code, 'service_unavailable');
        assert.doesNotMatch(body.error.message, /malformed/, 'the cause is for the log, not the client');
      }
      const lines = logs.filter((l) => l.code === 'SQLITE_CORRUPT');
      assert.equal(lines.length, 1, 'three failures within a second: one line');
      assert.equal(lines[0].level, 'error');
      assert.equal(lines[0].error, 'database disk image is malformed');
      assert.equal(lines[0].request_id, 'req-1');
    } finally {
      await server.close();
    }
  });
});
