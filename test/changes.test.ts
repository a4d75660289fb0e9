// GET /v1/changes and build-snapshot --previous: three snapshots built in a row from edited fixture sources; a client's
// copy of every resource in every locale, brought forward by the feed, is exactly the later snapshot's.
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createClient } from '../client/src/index.ts';
import { CHANGE_HISTORY_STEPS, collapse } from '../snapshot-format/changes.ts';
import { LOCALES } from '../snapshot-format/locales.ts';
import { inspectSnapshot } from '../src/inspect/inspect.ts';
import { pageSql } from '../src/routes/changes.ts';
import { copyFixture, ROOT, tempDir } from './support/files.ts';
import { walk, withParams } from './support/model.ts';
import { startServer, type TestServer } from './support/server.ts';
import { assert400, assertError } from './support/shapes.ts';
import { buildTestSnapshot, fixtureSnapshot } from './support/snapshots.ts';

type Rec = Record<string, any>;

/** Changes a source folder: `fn` edits a record in place, or returns null to drop it; `add` appends records. */
function edit(dir: string, file: string, edits: Record<string, (r: Rec) => Rec | null | undefined>, add: Rec[] = []) {
  const path = join(dir, `${file}.ndjson`);
  const out: Rec[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n').filter(Boolean)) {
    const r = JSON.parse(line) as Rec;
    const f = edits[r.id];
    if (!f) out.push(r);
    else {
      const next = f(r);
      if (next !== null) out.push(next ?? r);
    }
  }
  writeFileSync(path, `${[...out, ...add].map((r) => JSON.stringify(r)).join('\n')}\n`);
}
const line = (dir: string, file: string, id: string): Rec =>
  readFileSync(join(dir, `${file}.ndjson`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .find((r) => r.id === id);

/** How a client reads each resource: its list (paged, or bounded) and its detail where there is one. */
const READ: Record<string, { list: string; detail?: string; bounded?: boolean }> = {
  locations: { list: '/v1/locations', detail: '/v1/locations/' },
  owners: { list: '/v1/owners', detail: '/v1/owners/' },
  listings: { list: '/v1/listings', detail: '/v1/listings/' },
  internet_providers: { list: '/v1/internet/providers', detail: '/v1/internet/providers/' },
  internet_plans: { list: '/v1/internet/plans' },
  insurance_providers: { list: '/v1/insurance/providers', detail: '/v1/insurance/providers/' },
  insurance_products: { list: '/v1/insurance/products' },
  platforms: { list: '/v1/platforms', detail: '/v1/platforms/' },
  articles: { list: '/v1/articles', detail: '/v1/articles/' },
  glossary: { list: '/v1/glossary', detail: '/v1/glossary/' },
  metrics: { list: '/v1/market/metrics', bounded: true },
};

/** A copy: resource → locale → id → the record as the client keeps it (its detail, or its list item). */
type Copy = Record<string, Record<string, Map<string, string>>>;

async function listed(server: TestServer, resource: string, locale: string): Promise<Rec[]> {
  const r = READ[resource];
  if (!r.bounded) return (await walk(server, `${r.list}?locale=${locale}`, 100)).items;
  const res = await server.get(`${r.list}?locale=${locale}`);
  assert.equal(res.status, 200);
  return res.body.data;
}

async function recordOf(server: TestServer, resource: string, locale: string, item: Rec): Promise<string> {
  const r = READ[resource];
  if (!r.detail) return JSON.stringify(item);
  const res = await server.get(`${r.detail}${encodeURIComponent(item.id)}?locale=${locale}`);
  assert.equal(res.status, 200, `${resource} ${item.id}: ${res.text}`);
  return JSON.stringify(res.body.data);
}

async function copyOf(server: TestServer): Promise<Copy> {
  const copy: Copy = {};
  for (const resource of Object.keys(READ)) {
    copy[resource] = {};
    for (const locale of LOCALES) {
      const m = new Map<string, string>();
      for (const item of await listed(server, resource, locale))
        m.set(item.id, await recordOf(server, resource, locale, item));
      copy[resource][locale] = m;
    }
  }
  return copy;
}

const clone = (c: Copy): Copy =>
  Object.fromEntries(
    Object.entries(c).map(([r, byLocale]) => [
      r,
      Object.fromEntries(Object.entries(byLocale).map(([l, m]) => [l, new Map(m)])),
    ]),
  );

async function feed(server: TestServer, since: string, limit = 3, extra = ''): Promise<Rec[]> {
  return (await walk(server, `/v1/changes?since=${since}${extra}`, limit)).items;
}

/** Applies a feed as a client would: drop the removed, fetch the added and changed in every locale. */
async function apply(server: TestServer, copy: Copy, changes: Rec[]): Promise<void> {
  for (const { resource, id, change } of changes) {
    const r = READ[resource];
    assert.ok(r, `a resource the client knows: ${resource}`);
    for (const locale of LOCALES) {
      const m = copy[resource][locale];
      assert.equal(m.has(id), change !== 'added', `${change} ${resource} ${id}: ${m.has(id) ? '' : 'not '}in the copy`);
      if (change === 'removed') {
        m.delete(id);
        if (r.detail) assertError(await server.get(`${r.detail}${encodeURIComponent(id)}?locale=${locale}`), 404);
        continue;
      }
      // A list-only resource: the record is found in its list.
      const item = r.detail ? { id } : (await listed(server, resource, locale)).find((x) => x.id === id);
      assert.ok(item, `${resource} ${id} is listed`);
      m.set(id, await recordOf(server, resource, locale, item));
    }
  }
}

const asPlain = (c: Copy) =>
  Object.fromEntries(
    Object.entries(c).map(([r, byLocale]) => [
      r,
      Object.fromEntries(Object.entries(byLocale).map(([l, m]) => [l, Object.fromEntries([...m].sort())])),
    ]),
  );

const servers: TestServer[] = [];
const snaps: { path: string; id: string }[] = [];
const copies: Copy[] = [];
let plain: { path: string; id: string };

before(async () => {
  const src = copyFixture();
  // Each build only read afterwards: from the cache, keyed by the edited source and the previous snapshot.
  const build = async (n: number, previous?: string) => {
    const { path, result } = await fixtureSnapshot(src, { builtAt: `2026-11-0${n}T00:00:00.000Z`, previous });
    return { path, id: result.snapshotId! };
  };
  plain = await build(1);
  snaps.push(plain);
  // Step 1 → 2.
  edit(
    src,
    'listings',
    {
      'lst-001': (r) => ({ ...r, title: { ...r.title, nl: 'Zonnige woning in De Pijp' } }), // one locale only
      'lst-002': () => null, // gone from the source
      'lst-003': (r) => ({ ...r, active: false }), // no longer public
      'lst-004': (r) => ({ ...r, active: true }), // public now
      'lst-009': (r) => ({ ...r, price_eur: r.price_eur + 50 }),
    },
    [{ ...line(src, 'listings', 'lst-010'), id: 'lst-100', slug: 'lst-100-slug' }],
  );
  edit(src, 'locations', { 'loc-dh': (r) => ({ ...r, name: { ...r.name, es: 'El Haya' } }) }); // a city's name
  edit(src, 'owners', { 'own-2': (r) => ({ ...r, name: 'Piet Jansen' }) });
  edit(src, 'internet_plans', { 'plan-2': (r) => ({ ...r, regular_monthly_price_cents: 7100 }) });
  edit(src, 'insurance_products', { 'insp-1': () => null });
  edit(src, 'glossary', { 'gl-huurtoeslag': (r) => ({ ...r, definition: { ...r.definition, de: 'Mietzuschuss.' } }) });
  edit(src, 'metrics', { new_listings: (r) => ({ ...r, name: { ...r.name, fr: 'Nouvelles annonces' } }) });
  edit(src, 'platforms', {}, [{ ...line(src, 'platforms', 'plat-kamernet'), id: 'plat-new', slug: 'new' }]);
  snaps.push(await build(2, snaps[0].path));
  // Step 2 → 3.
  edit(
    src,
    'listings',
    {
      'lst-100': () => null, // added, then removed: nothing since 1
      'lst-004': (r) => ({ ...r, price_eur: 1234 }), // added, then changed: added since 1
      'lst-005': (r) => ({ ...r, published: true }),
      'lst-009': () => null, // changed, then removed: removed since 1
      'lst-006': (r) => ({ ...r, offer_type: 'rent' }), // a sale listing offered for rent: added
    },
    [line(join(ROOT, 'test/fixtures/basic'), 'listings', 'lst-002')], // removed, then added: changed since 1
  );
  edit(src, 'locations', {
    'loc-nh': (r) => ({ ...r, name: { ...r.name, nl: 'Noord Holland' } }), // a parent's name: its places change
    'loc-hidden': (r) => ({ ...r, published: true }),
  });
  edit(src, 'platforms', { 'plat-new': (r) => ({ ...r, name: 'New platform' }) });
  edit(src, 'articles', { 'art-1': (r) => ({ ...r, category: 'guides-2' }) });
  snaps.push(await build(3, snaps[1].path));
  for (const s of snaps) servers.push(await startServer({ SNAPSHOT_PATH: s.path }));
  for (const s of servers) copies.push(await copyOf(s));
});
after(async () => {
  for (const s of servers) await s.close();
});

describe('GET /v1/changes', () => {
  it('brings a copy of snapshot 2 to snapshot 3 (one step), every resource in every locale', async () => {
    const changes = await feed(servers[2], snaps[1].id);
    const copy = clone(copies[1]);
    await apply(servers[2], copy, changes);
    assert.deepEqual(asPlain(copy), asPlain(copies[2]));
    // Each change is real: an added or removed record, or one that differs in some locale.
    for (const { resource, id } of changes.filter((c) => c.change === 'changed'))
      assert.ok(
        LOCALES.some((l) => copies[1][resource][l].get(id) !== copies[2][resource][l].get(id)),
        `${resource} ${id} changed`,
      );
  });

  it('brings a copy of snapshot 1 to snapshot 3 (two steps, collapsed per record)', async () => {
    const changes = await feed(servers[2], snaps[0].id);
    const copy = clone(copies[0]);
    await apply(servers[2], copy, changes);
    assert.deepEqual(asPlain(copy), asPlain(copies[2]));
    const listings = Object.fromEntries(changes.filter((c) => c.resource === 'listings').map((c) => [c.id, c.change]));
    assert.equal(listings['lst-100'], undefined, 'added then removed: nothing');
    assert.equal(listings['lst-004'], 'added', 'added then changed: added');
    assert.equal(listings['lst-002'], 'changed', 'removed then added: changed');
    assert.equal(listings['lst-009'], 'removed', 'changed then removed: removed');
    assert.equal(listings['lst-006'], 'added', 'a sale listing now for rent: added');
    assert.equal(listings['lst-003'], 'removed', 'an inactive listing: removed');
    const locations = Object.fromEntries(
      changes.filter((c) => c.resource === 'locations').map((c) => [c.id, c.change]),
    );
    assert.equal(locations['loc-ams'], 'changed', "a place whose parent's name changed (nl) is changed");
    assert.equal(locations['loc-hidden'], 'added', 'a location published now: added');
    assert.equal(listings['lst-007'], 'changed', "a listing whose city's name changed (es) is changed");
  });

  it('lists one item per record in (resource, id) order with meta.snapshot_id, ETag and X-Snapshot-Id', async () => {
    const res = await servers[2].get(`/v1/changes?since=${snaps[0].id}&limit=100`);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body), ['data', 'pagination', 'meta']);
    assert.deepEqual(res.body.meta, {
      locale: 'en',
      request_id: res.headers.get('x-request-id'),
      snapshot_id: snaps[2].id,
    });
    assert.equal(res.headers.get('x-snapshot-id'), snaps[2].id);
    assert.ok(res.headers.get('etag'));
    const keys = res.body.data.map((c: Rec) => [c.resource, c.id]);
    const sorted = [...keys].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : 1));
    assert.deepEqual(keys, sorted);
    assert.equal(new Set(keys.map((k: string[]) => k.join('/'))).size, keys.length);
    for (const c of res.body.data) assert.deepEqual(Object.keys(c), ['resource', 'id', 'change']);
    const again = await servers[2].get(`/v1/changes?since=${snaps[0].id}&limit=100`, {
      headers: { 'If-None-Match': res.headers.get('etag')! },
    });
    assert.equal(again.status, 304);
  });

  it('filters by resource; the cursor is bound to since and resource', async () => {
    const all = await feed(servers[2], snaps[0].id, 100);
    const listings = await feed(servers[2], snaps[0].id, 2, '&resource=listings');
    assert.deepEqual(
      listings,
      all.filter((c) => c.resource === 'listings'),
    );
    const first = await servers[2].get(`/v1/changes?since=${snaps[0].id}&resource=listings&limit=2`);
    const cursor = first.body.pagination.next_cursor;
    assert.equal(typeof cursor, 'string');
    const other = { since: snaps[1].id, resource: 'listings', limit: 2, cursor };
    assert400(await servers[2].get(withParams('/v1/changes', other)), 'cursor');
    const noFilter = { since: snaps[0].id, limit: 2, cursor };
    assert400(await servers[2].get(withParams('/v1/changes', noFilter)), 'cursor');
    assert400(await servers[2].get(`/v1/changes?since=${snaps[0].id}&resource=listing`), 'resource');
  });

  it('is api.changes.all({ since }) in the typed client', async () => {
    const api = createClient({ baseUrl: servers[2].url, key: servers[2].key });
    const items = [];
    for await (const c of api.changes.all({ since: snaps[0].id, limit: 2 })) items.push(c);
    assert.deepEqual(items, await feed(servers[2], snaps[0].id, 100));
    const page = await api.changes.search({ since: snaps[1].id, resource: 'listings' });
    assert.equal(page.meta.snapshot_id, snaps[2].id);
  });

  it('reads a page by a range of one index, without a sort (EXPLAIN QUERY PLAN)', () => {
    const db = new Database(snaps[2].path, { readonly: true });
    try {
      for (const oneStep of [true, false])
        for (const byResource of [true, false]) {
          const plan = db
            .prepare(`EXPLAIN QUERY PLAN ${pageSql(oneStep, byResource, 101)}`)
            .all({ step: 1, resource: '', id: '' }) as { detail: string }[];
          const text = plan.map((p) => p.detail).join('; ');
          assert.equal(plan.length, 1, text);
          assert.match(
            text,
            oneStep
              ? /^SEARCH change_log USING PRIMARY KEY \(step=\? AND /
              : /^SEARCH change_log USING COVERING INDEX change_log_record \(/,
            text,
          );
        }
    } finally {
      db.close();
    }
  });

  it('refuses a cursor after a snapshot swap (the feed is another one); the walk restarts with the same since', async () => {
    const path = join(tempDir(), 'served.db');
    copyFileSync(snaps[1].path, path);
    const server = await startServer({ SNAPSHOT_PATH: path });
    try {
      const first = await server.get(`/v1/changes?since=${snaps[0].id}&limit=1`);
      assert.equal(first.body.meta.snapshot_id, snaps[1].id);
      const cursor = first.body.pagination.next_cursor;
      assert.equal(typeof cursor, 'string');
      copyFileSync(snaps[2].path, `${path}.next`);
      renameSync(`${path}.next`, path);
      assert.equal(await server.snapshots.refresh(), true, 'the new snapshot is swapped in');
      assert400(await server.get(withParams('/v1/changes', { since: snaps[0].id, limit: 1, cursor })), 'cursor');
      const again = await server.get(`/v1/changes?since=${snaps[0].id}&limit=1`);
      assert.equal(again.body.meta.snapshot_id, snaps[2].id);
    } finally {
      await server.close();
    }
  });

  it('answers an empty page for since = the served snapshot', async () => {
    const res = await servers[2].get(`/v1/changes?since=${snaps[2].id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, []);
    assert.deepEqual(res.body.pagination, { limit: 20, has_more: false, next_cursor: null });
    assert.equal(res.body.meta.snapshot_id, snaps[2].id);
  });

  it('answers 400 naming since and the oldest snapshot held for an unknown since, or none without history', async () => {
    const res = await servers[2].get('/v1/changes?since=snap_000000000000000000000000');
    assert400(res, 'since');
    assert.match(res.body.error.message, /walk the collections in full/);
    assert.match(res.body.error.message, new RegExp(snaps[0].id));
    const none = await servers[0].get(`/v1/changes?since=${snaps[1].id}`);
    assert400(none, 'since');
    assert.match(none.body.error.message, /holds none/);
    assert400(await servers[2].get('/v1/changes'), 'since');
  });
});

describe('build-snapshot --previous: the history', () => {
  it(`keeps at most the bound (${CHANGE_HISTORY_STEPS} by default; 2 here), the oldest steps dropped`, async () => {
    const src = copyFixture();
    const dir = tempDir();
    const ids: string[] = [];
    let previous: string | undefined;
    for (let n = 1; n <= 4; n++) {
      edit(src, 'owners', { 'own-2': (r) => ({ ...r, name: `Piet ${n}` }) });
      const out = join(dir, `h${n}.db`);
      const { result } = await buildTestSnapshot(src, out, { previous, historySteps: 2 });
      ids.push(result.snapshotId!);
      assert.equal(result.changes?.steps ?? 0, Math.min(n - 1, 2));
      previous = out;
    }
    const server = await startServer({ SNAPSHOT_PATH: previous! });
    try {
      assert.deepEqual(await feed(server, ids[1], 10), [{ resource: 'owners', id: 'own-2', change: 'changed' }]);
      const res = await server.get(`/v1/changes?since=${ids[0]}`);
      assert400(res, 'since');
      assert.match(res.body.error.message, new RegExp(`oldest ${ids[1]}`));
    } finally {
      await server.close();
    }
    // What `snapshot inspect` reports (its report, in process: the command itself is snapshot-cli.test.ts's).
    assert.deepEqual(inspectSnapshot(previous!).change_history, { steps: 2, oldest: ids[1] });
  });

  it('refuses a --previous that is not a snapshot, and leaves the target alone', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'old.db'), 'not a database');
    await assert.rejects(
      buildTestSnapshot(undefined, join(dir, 'new.db'), { previous: join(dir, 'old.db') }),
      /\(previous\)/,
    );
  });

  it('collapses a record’s changes by its first and last', () => {
    assert.equal(collapse('added', 'removed'), null);
    assert.equal(collapse('added', 'changed'), 'added');
    assert.equal(collapse('removed', 'added'), 'changed');
    assert.equal(collapse('changed', 'removed'), 'removed');
    assert.equal(collapse('changed', 'changed'), 'changed');
    assert.equal(collapse('added', 'added'), 'added');
  });
});
