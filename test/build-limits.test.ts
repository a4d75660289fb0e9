// The snapshot compiler's reading at its limits: the listings parser's duplicate-id index, lines over the length
// cap, UTF-8 checked per chunk, and listings read in 4 MiB chunks with characters and lines across their boundaries.

import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { buildSnapshot } from '../build-snapshot/compile.ts';
import { IdIndex } from '../build-snapshot/id-index.ts';
import { LineSplitter, MAX_LINE, OVERLONG, OVERLONG_REASON, Utf8Check } from '../build-snapshot/read-source.ts';
import { mulberry32 } from '../generate/random.ts';
import { copyFixture, tempDir } from './support/files.ts';
import { buildTestSnapshot } from './support/snapshots.ts';

describe('IdIndex (the duplicate-id check of the listings parser)', () => {
  it('finds every repeat with the line of its first occurrence, across growth and hash collisions', () => {
    const index = new IdIndex();
    const first = new Map<string, number>();
    const ids: string[] = [];
    const r = mulberry32(7);
    for (let line = 1; line <= 60_000; line++) {
      // A mix of sequential ids, random ids of varying length, and repeats of earlier ones.
      const id =
        r() < 0.2 && ids.length
          ? ids[Math.floor(r() * ids.length)]
          : r() < 0.5
            ? `lst_${line}`
            : `x${Math.floor(r() * 1e9).toString(36)}:${line % 7}`;
      const got = index.firstLine(id, line);
      assert.equal(got, first.get(id), `${id} at line ${line}`);
      if (!first.has(id)) {
        first.set(id, line);
        ids.push(id);
      }
    }
    assert.equal(index.size, first.size);
    assert.ok(first.size > 40_000, `${first.size} distinct ids`);
  });
});

describe('snapshot compiler: overlong lines', () => {
  it('Utf8Check says per chunk whether the lines it completes are valid UTF-8, for any chunking (property test)', () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const valid = [Buffer.from('a'), Buffer.from('é'), Buffer.from('€'), Buffer.from('🏠'), Buffer.from('\n')];
    const invalid = [Buffer.from([0xff]), Buffer.from([0xe2, 0x82]), Buffer.from([0x80])];
    // Mostly valid lines (a bad byte 1 piece in 40), cut anywhere: also inside characters.
    const piece = () => (rnd(40) === 0 ? invalid[rnd(invalid.length)] : valid[rnd(valid.length)]);
    for (let round = 0; round < 500; round++) {
      const data = Buffer.concat(Array.from({ length: 1 + rnd(60) }, piece));
      const cuts = [...new Set(Array.from({ length: rnd(12) }, () => rnd(data.length + 1)))].sort((a, b) => a - b);
      const check = new Utf8Check();
      let from = 0;
      for (const to of [...cuts, data.length]) {
        const got = to === data.length && from === data.length ? null : check.push(data.subarray(from, to));
        // The reference: every line that ends (with its newline) inside this chunk, checked whole.
        const ends: number[] = [];
        for (let i = from; i < to; i++) if (data[i] === 0x0a) ends.push(i);
        if (got !== null) {
          const lineStart = (end: number) => data.lastIndexOf(0x0a, end - 1) + 1;
          const want = ends.every((e) => isUtf8(data.subarray(lineStart(e), e + 1)));
          assert.equal(got, want, `round ${round}, chunk ${from}-${to} of ${data.toString('hex')}`);
        }
        from = to;
      }
      const lastLine = data.subarray(data.lastIndexOf(0x0a) + 1);
      assert.equal(check.end(), isUtf8(lastLine), `round ${round}: the last line`);
    }
  });

  it('LineSplitter yields lines across chunks, an overlong line once (wherever it is found), and the last line', () => {
    const split = (chunks: string[], max: number) => {
      const s = new LineSplitter(max);
      const out: (string | symbol)[] = [];
      for (const c of chunks) for (const l of s.push(c)) out.push(l);
      for (const l of s.end()) out.push(l);
      return out;
    };
    assert.deepEqual(split(['ab', 'c\nd', 'e\n', 'f'], 5), ['abc', 'de', 'f']);
    assert.deepEqual(split(['abcdefgh\nx\n'], 5), [OVERLONG, 'x'], 'over the cap within one chunk');
    assert.deepEqual(
      split(['abc', 'def', 'ghi', '\nx'], 5),
      [OVERLONG, 'x'],
      'over the cap across chunks: reported once',
    );
    assert.deepEqual(split(['abcde\n', 'abcdef'], 5), ['abcde', OVERLONG], 'at the cap is fine; an overlong last line');
    assert.deepEqual(split(['\n\n'], 5), ['', ''], 'blank lines are lines');
  });
  it('reports a line over the cap as file:line and goes on with the next lines (main thread and listings parser)', async () => {
    const dir = copyFixture();
    const huge = JSON.stringify({ id: 'x', text: 'a'.repeat(MAX_LINE) }); // what a whole JSON array on one line looks like
    for (const file of ['owners.ndjson', 'listings.ndjson']) {
      const lines = readFileSync(join(dir, file), 'utf8').split('\n');
      lines.splice(2, 0, huge, 'not json');
      writeFileSync(join(dir, file), lines.join('\n'));
    }
    const r = await buildSnapshot({ source: dir, out: join(tempDir(), 'snapshot.db'), log: () => {} });
    assert.equal(r.ok, false);
    for (const file of ['owners.ndjson', 'listings.ndjson']) {
      assert.ok(r.problems.includes(`${file}:3: (record): ${OVERLONG_REASON}`), r.problems.join('\n'));
      assert.ok(
        r.problems.some((p) => p.startsWith(`${file}:4: (record): malformed JSON`)),
        'the line after it is read, with its own number',
      );
    }
  });
});

describe('snapshot compiler: reading listings in 4 MiB chunks', () => {
  it('keeps a multi-byte character that straddles a chunk boundary, and counts lines across chunks', async () => {
    const dir = copyFixture();
    const file = join(dir, 'listings.ndjson');
    const base = JSON.parse(readFileSync(file, 'utf8').split('\n')[0]);
    const CHUNK = 4 << 20;
    const title = (i: number) => `Woning ${i} € 🏠 ${'é€'.repeat(200)}`; // 2-, 3- and 4-byte characters
    const lines: string[] = [];
    let bytes = Buffer.byteLength(readFileSync(file));
    for (let i = 0; bytes < CHUNK + 200_000; i++) {
      const line = JSON.stringify({ ...base, id: `lst-z${String(i).padStart(6, '0')}`, title: { en: title(i) } });
      lines.push(line);
      bytes += Buffer.byteLength(line) + 1;
    }
    // Shift the content with spaces (allowed in JSON) until the byte at the boundary is inside a
    // multi-byte character, not at its first byte.
    const original = readFileSync(file);
    let text = '';
    for (let pad = 0; pad < 8; pad++) {
      text = `${original.toString('utf8') + ' '.repeat(pad) + lines.join('\n')}\n`;
      const b = Buffer.from(text)[CHUNK];
      if ((b & 0xc0) === 0x80) break; // a continuation byte
    }
    assert.equal(Buffer.from(text)[CHUNK] & 0xc0, 0x80, 'a character straddles the boundary');
    writeFileSync(file, text);
    const built = await buildTestSnapshot(dir);
    const db = new Database(built.path, { readonly: true });
    try {
      const titles = db
        .prepare(
          "SELECT l.id, t.title FROM listings l JOIN listing_summary t ON t.rid = l.rid WHERE l.id LIKE 'lst-z%' ORDER BY l.id",
        )
        .all() as { id: string; title: string }[];
      assert.equal(titles.length, lines.length);
      for (const [i, row] of titles.entries()) assert.equal(row.title, title(i), row.id);
    } finally {
      db.close();
    }
    // Line numbers run on across chunks: a bad record after the boundary is reported at its own line.
    const firstBad =
      original
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== '').length +
      1 +
      lines.length;
    writeFileSync(file, `${text}{"id": "lst-bad"\n`);
    const r = await buildSnapshot({ source: dir, out: join(tempDir(), 'x.db'), log: () => {} });
    assert.equal(r.ok, false);
    assert.ok(
      r.problems.some((p) => p.startsWith(`listings.ndjson:${firstBad}:`)),
      r.problems.join('\n'),
    );
  });
});
