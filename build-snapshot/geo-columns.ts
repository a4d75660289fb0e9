// The near filter's compiled data: each listing's point as a unit vector in the column store, and listings per
// cell of latitude and longitude for the planner's estimate (snapshot-format/listing-filters.ts' NEAR_FILTER).
import type { Database } from 'better-sqlite3';
import { unitVector } from '../snapshot-format/geo.ts';
import { NEAR_FILTER } from '../snapshot-format/listing-filters.ts';

const blob = (a: Float64Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/**
 * Reads the coordinates from listing_summary (where they are stored, as the JSON text of their numbers: the
 * same doubles) in one pass, and writes geo_x, geo_y and geo_z (NaN without coordinates) to listing_columns and
 * the per-cell counts to listing_geo_cells. About 4 s at 1M listings (751k rows), most of it reading the table.
 */
export function deriveGeo(db: Database, n: number): void {
  const [x, y, z] = NEAR_FILTER.columns.map(() => new Float64Array(n).fill(Number.NaN));
  const cells = new Map<string, number>();
  const rows = db
    .prepare('SELECT rid, s_latitude, s_longitude FROM listing_summary')
    .raw()
    .iterate() as IterableIterator<[number, string, string]>;
  const perDegree = Math.round(1 / NEAR_FILTER.cellDegrees);
  for (const [rid, latText, lonText] of rows) {
    const lat = JSON.parse(latText) as number | null,
      lon = JSON.parse(lonText) as number | null;
    if (lat === null || lon === null) continue;
    const v = unitVector(lat, lon);
    x[rid - 1] = v[0];
    y[rid - 1] = v[1];
    z[rid - 1] = v[2];
    const cell = `${Math.floor(lat * perDegree)},${Math.floor(lon * perDegree)}`;
    cells.set(cell, (cells.get(cell) ?? 0) + 1);
  }
  const put = db.prepare('INSERT INTO listing_columns (name, data) VALUES (?, ?)');
  const vectors = [x, y, z];
  NEAR_FILTER.columns.forEach((name, i) => {
    put.run(name, blob(vectors[i]));
  });
  const cell = db.prepare('INSERT INTO listing_geo_cells (lat_cell, lon_cell, n) VALUES (?, ?, ?)');
  for (const [key, count] of cells) {
    const [la, lo] = key.split(',').map(Number);
    cell.run(la, lo, count);
  }
}
