// near far from the Netherlands: listings moved to points by the antimeridian, at negative latitudes and by both
// poles, where a circle's box wraps across ±180° or spans every longitude (geo.ts' boxOf, near-rows.ts' eachRun).
// The column scan's pages, row sets, stats and the cells' stats must equal a brute-force great-circle filter.

import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { mulberry32 } from '../generate/random.ts';
import type { ListingFilters } from '../snapshot-format/listing-sql.ts';
import { ListingQueries, statsFromPrices } from '../src/listings/planner.ts';
import type { PrimaryHint } from '../src/listings/scan.ts';
import { tempDir } from './support/files.ts';
import { fixtureSnapshot, generatedSource } from './support/snapshots.ts';

/** The great-circle distance in km by the haversine formula, on the sphere the API states. */
function distanceKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = Math.PI / 180;
  const a =
    Math.sin(((lat2 - lat1) * r) / 2) ** 2 +
    Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(((lon2 - lon1) * r) / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** Where the listings are moved: [latitude, longitude, spread in degrees of latitude, of longitude]. */
const CLUSTERS: [number, number, number, number][] = [
  [-17.5, 179.8, 0.6, 0.5], // Fiji, across the antimeridian
  [-33.9, 18.4, 0.4, 0.5], // Cape Town: negative latitude
  [89.7, 0, 0.3, 360], // by the north pole, every longitude
  [-89.8, 0, 0.2, 360], // by the south pole
];
const HINTS: PrimaryHint[] = [null, 'near', 'property_type', 'price'];

describe('near by the antimeridian, at negative latitudes and by the poles: the scan equals brute force', () => {
  let db: Database.Database;
  let q: ListingQueries;
  /** Each listing's rid, point and price (null: no coordinates), from the edited source. */
  const points = new Map<number, { lat: number; lon: number } | null>();

  before(async () => {
    const generated = generatedSource(400, 11).dir;
    const source = join(tempDir(), 'source');
    cpSync(generated, source, { recursive: true });
    const file = join(source, 'listings.ndjson');
    const r = mulberry32(12);
    const out = readFileSync(file, 'utf8')
      .split('\n')
      .map((line, i) => {
        if (!line.trim()) return line;
        const rec = JSON.parse(line);
        if (rec.latitude == null || rec.longitude == null) return line;
        const [lat, lon, dLat, dLon] = CLUSTERS[i % CLUSTERS.length];
        rec.latitude = Math.max(-90, Math.min(90, Math.round((lat + (r() - 0.5) * dLat) * 1e6) / 1e6));
        let x = lon + (r() - 0.5) * dLon;
        x = ((((x + 180) % 360) + 360) % 360) - 180;
        rec.longitude = Math.round(x * 1e6) / 1e6;
        return JSON.stringify(rec);
      });
    writeFileSync(file, out.join('\n'));
    const { path } = await fixtureSnapshot(source);
    db = new Database(path, { readonly: true });
    q = new ListingQueries(db);
    const rows = db.prepare('SELECT rid, s_latitude, s_longitude FROM listing_summary').raw().all() as [
      number,
      string,
      string,
    ][];
    for (const [rid, lat, lon] of rows) {
      const la = JSON.parse(lat) as number | null,
        lo = JSON.parse(lon) as number | null;
      points.set(rid, la === null || lo === null ? null : { lat: la, lon: lo });
    }
  });

  /** Circles around each cluster, some crossing the antimeridian or covering a pole, radii from 0.5 to 50 km. */
  function circles(): ListingFilters[] {
    const r = mulberry32(99);
    const out: ListingFilters[] = [];
    for (const [lat, lon, dLat, dLon] of CLUSTERS)
      for (let k = 0; k < 12; k++) {
        const la = Math.max(-90, Math.min(90, lat + (r() - 0.5) * dLat));
        const lo =
          k % 3 === 0 ? (r() < 0.5 ? 180 : -180) : ((((lon + (r() - 0.5) * dLon + 180) % 360) + 360) % 360) - 180;
        const km = [0.5, 2, 5, 10, 25, 50][k % 6];
        out.push({ near: { lat: la, lon: lo, km } });
        if (k % 2) out.push({ near: { lat: la, lon: lo, km }, property_type: 'apartment' });
      }
    out.push({ near: { lat: 90, lon: 0, km: 50 } }, { near: { lat: -90, lon: 123, km: 50 } });
    return out;
  }

  /** The brute force's rids within the circle, and those within a metre of its edge (either answer is right). */
  function expected(f: ListingFilters): { within: number[]; edge: Set<number> } {
    const n = f.near!;
    const others = new Set(q.matchingRids({ ...f, near: undefined }));
    const within: number[] = [],
      edge = new Set<number>();
    for (const [rid, p] of points) {
      if (!p || !others.has(rid)) continue;
      const d = distanceKm(n.lat, n.lon, p.lat, p.lon);
      if (Math.abs(d - n.km) <= 0.001) edge.add(rid);
      else if (d < n.km) within.push(rid);
    }
    return { within: within.sort((a, b) => a - b), edge };
  }

  it('pages every listing within each circle (every loop) and nothing else', () => {
    let found = 0;
    for (const f of circles()) {
      const want = expected(f);
      for (const hint of HINTS) {
        const got = q.scan.page(f, 0, 10_000, hint).filter((rid) => !want.edge.has(rid));
        assert.deepEqual(got, want.within, `${hint} ${JSON.stringify(f)}`);
      }
      assert.deepEqual(
        q.matchingRids(f).filter((rid) => !want.edge.has(rid)),
        want.within,
        `index plan ${JSON.stringify(f)}`,
      );
      found += want.within.length;
    }
    assert.ok(found > 500, `the circles hold ${found} listings`);
  });

  it("answers stats (row sets and the cells) as the brute force's listings give them", () => {
    let fromCells = 0;
    for (const f of circles()) {
      const want = expected(f);
      if (want.edge.size > 0) continue;
      const inside = new Set(want.within);
      const prices = db.prepare('SELECT rid, price_eur FROM listings').raw().all() as [number, number | null][];
      const expectedStats = statsFromPrices(prices.filter(([rid]) => inside.has(rid)).map(([, p]) => p));
      for (const hint of HINTS) assert.deepEqual(q.scan.stats(f, hint), expectedStats, `${hint} ${JSON.stringify(f)}`);
      const cells = q.scan.nearCellStats(f);
      if (cells) {
        assert.deepEqual(cells, expectedStats, `cells ${JSON.stringify(f)}`);
        if (expectedStats.count > 1) fromCells++;
      }
    }
    assert.ok(fromCells > 5, `the cells answered ${fromCells} circles with listings`);
  });
});
