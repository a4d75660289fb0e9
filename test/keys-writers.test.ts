// The key store changed by four writers in parallel (processes, each change one IMMEDIATE transaction as the keys
// command makes it) while the server answers: a key re-enabled gets its 200, a key revoked its 401, an unchanged key
// its 200, on the first request sent after each change committed; none gets a 503 because another writer held the lock.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from './support/files.ts';
import { issueKey, useServer } from './support/server.ts';

const WRITERS = 4;
const PER_WRITER = 12;

/**
 * One writer: for each of its keys, disable then enable it (printing `enabled <id>`), then revoke each of its others
 * (`revoked <id>`), and between two changes it keeps the lock busy with changes to a key of its own.
 */
const WRITER = `
import { changeKey, openKeyStore } from ${JSON.stringify(join(ROOT, 'src/access/key-store.ts'))};
const [path, own, toggles, revokes] = process.argv.slice(-4);
const db = openKeyStore(path, { create: false });
db.pragma('busy_timeout = 5000');
const churn = () => { changeKey(db, own, 'disable'); changeKey(db, own, 'enable'); };
const pause = () => new Promise((r) => setTimeout(r, 10 + Math.random() * 20));
for (const id of toggles.split(',')) {
  changeKey(db, id, 'disable'); churn(); await pause();
  changeKey(db, id, 'enable'); console.log('enabled ' + id); churn(); await pause();
}
for (const id of revokes.split(',')) { changeKey(db, id, 'revoke'); console.log('revoked ' + id); churn(); await pause(); }
db.close();
`;

describe('the key store changed by parallel writers while requests come', () => {
  const server = useServer();

  it('answers a re-enabled key 200 and a revoked key 401 on the first request after the change, an unchanged key 200: no 503', async () => {
    const keys = new Map<string, string>();
    const issue = (name: string) => {
      const k = issueKey(server.keysPath, { name });
      keys.set(k.id, k.key);
      return k.id;
    };
    const writers = Array.from({ length: WRITERS }, (_, w) => ({
      own: issue(`churn ${w}`),
      toggles: Array.from({ length: PER_WRITER }, (_, i) => issue(`toggle ${w}.${i}`)),
      revokes: Array.from({ length: PER_WRITER }, (_, i) => issue(`revoke ${w}.${i}`)),
    }));
    const answers: { what: string; status: number; code?: string; ms: number }[] = [];
    const ask = async (what: string, key: string) => {
      const t0 = performance.now();
      const r = await server.get('/v1/listings?limit=1', { key });
      answers.push({ what, status: r.status, code: r.body?.error?.code, ms: Math.round(performance.now() - t0) });
    };
    const asked: Promise<void>[] = [];
    let running = WRITERS;
    // Traffic on a key nobody changes, all along.
    const steady = (async () => {
      while (running > 0) await ask('unchanged', server.key);
    })();
    const stderr: string[] = [];
    await Promise.all(
      writers.map(
        (w) =>
          new Promise<void>((resolve) => {
            const child = spawn(
              process.execPath,
              [
                '--import',
                'tsx',
                '--input-type=module',
                '-e',
                WRITER,
                server.keysPath,
                w.own,
                w.toggles.join(','),
                w.revokes.join(','),
              ],
              { cwd: ROOT },
            );
            let rest = '';
            child.stdout.on('data', (d) => {
              const lines = (rest + d).split('\n');
              rest = lines.pop()!;
              for (const line of lines) {
                const [what, id] = line.split(' ');
                asked.push(ask(what, keys.get(id)!));
              }
            });
            child.stderr.on('data', (d) => stderr.push(String(d)));
            child.on('close', (code) => {
              assert.equal(code, 0, stderr.join(''));
              running--;
              resolve();
            });
          }),
      ),
    );
    await Promise.all(asked);
    await steady;
    const count = (what: string, status: number) =>
      answers.filter((a) => a.what === what && a.status === status).length;
    const unavailable = answers.filter((a) => a.status === 503);
    assert.deepEqual(
      {
        enabled: count('enabled', 200),
        revoked: count('revoked', 401),
        unavailable: unavailable.length,
      },
      { enabled: WRITERS * PER_WRITER, revoked: WRITERS * PER_WRITER, unavailable: 0 },
      `answers that were not what the store said: ${JSON.stringify(answers.filter((a) => !(a.what === 'enabled' && a.status === 200) && !(a.what === 'revoked' && a.status === 401) && !(a.what === 'unchanged' && a.status === 200)).slice(0, 10))}`,
    );
    assert.ok(count('unchanged', 200) > 0);
    assert.equal(answers.filter((a) => a.what === 'unchanged' && a.status !== 200).length, 0);
  });
});
