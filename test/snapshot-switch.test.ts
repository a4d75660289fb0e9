// The switch instant on one member (SnapshotSource as a cluster worker runs it, no request arriving): its timer may
// fire before the wall clock reaches the instant, and a word given again answers again. The owner's side, commitAll:
// a member that has not confirmed is asked again, then replaced (with real processes: snapshot-owner-swaps.test.ts);
// prepareAll: one that has not prepared likewise (snapshot-owner-prepare.test.ts), one that refuses refuses for all.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { CONFIRM_MS, commitAll, type Member, PREPARE_MS, prepareAll } from '../src/snapshot/members.ts';
import { SnapshotSource } from '../src/snapshot/source.ts';
import { sleep } from './support/processes.ts';
import { changedSource, fixtureSnapshot } from './support/snapshots.ts';

let a: string;
let b: string;
before(async () => {
  a = (await fixtureSnapshot()).path;
  b = (await fixtureSnapshot(changedSource())).path;
});

/** A worker's source: serves the file it is given, switches when told (no owner of its own). */
const worker = (path: string) => new SnapshotSource(path, { served: { file: path, inode: '', linked: true } });

describe('a member switches at the instant with no request to look at it', () => {
  it('switches and confirms although its timer fired before Date.now() reached the instant', async () => {
    const s = worker(a);
    const wall = Date.now;
    try {
      const id = s.stage(1, { file: b, inode: '', linked: true });
      const at = Date.now() + 60;
      let late: number | null | undefined;
      void s.commit(1, at).then((l) => {
        late = l;
      });
      // A timer counts on the monotonic clock in whole ms, the instant is wall-clock time: about one timer in a hundred
      // fires up to 1 ms before Date.now() reaches its target (and a wall clock stepped back makes it more). Here the
      // wall clock falls 5 ms behind once the timer is set; nothing else (no request) looks at the clock.
      Date.now = () => wall() - 5;
      await sleep(400);
      assert.notEqual(late, undefined, 'the switch was confirmed without a request');
      assert.ok(late != null && late < 50, `late ${late} ms`);
      // peek() would switch on its own: read what was switched to only after the confirmation above.
      assert.equal(s.peek()?.meta.snapshot_id, id);
    } finally {
      Date.now = wall;
      s.close();
    }
  });

  it('never switches before the instant, however early its timer', async () => {
    const s = worker(a);
    const wall = Date.now;
    try {
      const old = s.peek()!.meta.snapshot_id;
      s.stage(2, { file: b, inode: '', linked: true });
      const at = Date.now() + 60;
      let switchedAt = 0;
      void s.commit(2, at).then(() => {
        switchedAt = Date.now();
      });
      Date.now = () => wall() - 20; // the timer fires 20 ms early by the wall clock
      while (switchedAt === 0 && Date.now() < at + 1000) {
        if (Date.now() < at - 2) assert.equal(s.peek()?.meta.snapshot_id, old, 'switched before the instant');
        await sleep(1);
      }
      assert.ok(switchedAt >= at, `switched ${at - switchedAt} ms before the instant`);
    } finally {
      Date.now = wall;
      s.close();
    }
  });

  it('answers a switch word given again: before the instant it waits for it, after it says it already switched', async () => {
    const s = worker(a);
    try {
      s.stage(3, { file: b, inode: '', linked: true });
      const at = Date.now() + 100;
      const first = s.commit(3, at);
      const again = s.commit(3, at);
      assert.deepEqual(await Promise.all([first, again]), [0, 0]);
      assert.equal(await s.commit(3, at), 0, 'already serving generation 3');
      assert.equal(await s.commit(4, at), null, 'nothing staged under generation 4');
    } finally {
      s.close();
    }
  });
});

describe('the owner waits for the confirmations a bounded time (commitAll)', () => {
  /** A member that confirms on the `answerOn`-th word (never when 0), and how many words it was given. */
  function member(name: string, answerOn: number) {
    let words = 0;
    let confirm: (late: number | null) => void = () => {};
    const confirmed = new Promise<number | null>((r) => {
      confirm = r;
    });
    const m: Member & { words(): number } = {
      name,
      prepare: async () => 'snap',
      commit: () => {
        if (++words === answerOn) confirm(0);
        return confirmed;
      },
      drop: () => {},
      words: () => words,
    };
    return m;
  }

  it('asks a silent member again after CONFIRM_MS, gives it up to be replaced after as long again, and never waits longer', async () => {
    const said: string[] = [];
    const record = (what: string) => (m: Member) => said.push(`${what} ${m.name}`);
    const on = {
      behind: record('behind'),
      caughtUp: record('caught up'),
      left: record('left'),
      silent: record('silent'),
    };
    const [prompt, second, silent] = [member('0', 1), member('1', 2), member('2', 0)];
    const at = Date.now() + 50;
    const late = await commitAll([prompt, second, silent], 7, at, on);
    const waited = Date.now() - at;
    assert.deepEqual(late, [0, 0, null]);
    assert.deepEqual(said.sort(), ['behind 1', 'behind 2', 'caught up 1', 'silent 2']);
    assert.deepEqual([prompt.words(), second.words(), silent.words()], [1, 2, 2]);
    assert.ok(waited >= 2 * CONFIRM_MS - 20 && waited < 2 * CONFIRM_MS + 1000, `waited ${waited} ms after the instant`);
  });
});

describe('the owner waits for the prepares a bounded time (prepareAll)', () => {
  const served = { file: 'x.db', inode: '1:2', linked: true };
  /** A member whose prepare answers `answer` (a never-settling promise: silent), counting words and drops. */
  function member(name: string, answer: () => Promise<string>) {
    const seen = { words: 0, drops: 0, replaced: '' };
    const m: Member = {
      name,
      prepare: () => {
        seen.words++;
        return answer();
      },
      commit: async () => 0,
      drop: () => void seen.drops++,
      replace: async (why) => void (seen.replaced = why),
    };
    return { m, seen };
  }
  const silent = () => new Promise<string>(() => {});

  it('asks a silent member again, replaces it after 2 × PREPARE_MS, and goes on with the others', async () => {
    const [a, b] = [member('0', async () => 'snap'), member('1', silent)];
    const t0 = Date.now();
    const r = await prepareAll([a.m, b.m], 3, served, undefined);
    const waited = Date.now() - t0;
    assert.deepEqual(r.ids, ['snap']);
    assert.deepEqual(r.prepared, [a.m]);
    assert.deepEqual([...r.replaced.keys()], [b.m]);
    assert.equal(r.refusal, null);
    assert.deepEqual([a.seen.words, b.seen.words, a.seen.drops + b.seen.drops], [1, 2, 0]);
    assert.match(b.seen.replaced, new RegExp(`did not prepare the snapshot within ${(2 * PREPARE_MS) / 1000} s`));
    assert.ok(waited >= 2 * PREPARE_MS - 20 && waited < 2 * PREPARE_MS + 1000, `waited ${waited} ms`);
  });

  it('a member that refuses refuses for all, whoever else is silent', async () => {
    const refuse = async () => {
      throw new Error('no such table: listing_summary');
    };
    const [a, b, c] = [member('0', async () => 'snap'), member('1', refuse), member('2', silent)];
    const r = await prepareAll([a.m, b.m, c.m], 4, served, undefined);
    assert.equal(r.refusal, 'no such table: listing_summary');
    assert.deepEqual([a.seen.drops, b.seen.drops, c.seen.drops], [1, 1, 1], 'every member dropped it');
  });
});
