// The near filter's compiled data: each listing's point as a unit vector in the column store, the listings per
// cell of latitude and longitude (the planner's estimate) and the rows in cell order (the scan's cell runs), for
// snapshot-format/listing-filters.ts' NEAR_FILTER.
import type { Database } from 'better-sqlite3';
import { unitVector } from '../snapshot-format/geo.ts';
import { NEAR_FILTER, nearCell } from '../snapshot-format/listing-filters.ts';

const blob = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/**
 * Reads the coordinates from listing_summary (where they are stored, as the JSON text of their numbers: the
 * same doubles) in one pass; writes geo_x, geo_y and geo_z (NaN without coordinates), geo_cell_order (the rows
 * with coordinates by cell, (lat_cell, lon_cell) ascending, rows ascending within a cell) and the points in that
 * order (geo_cell_x, geo_cell_y, geo_cell_z) to listing_columns, and each cell's count to listing_geo_cells.
 */
export function deriveGeo(db: Database, n: number): void {
  const [x, y, z] = NEAR_FILTER.columns.map(() => new Float64Array(n).fill(Number.NaN));
  const cellOf = new Int32Array(n).fill(-1);
  const keys = new Map<string, number>();
  const rows = db
    .prepare('SELECT rid, s_latitude, s_longitude FROM listing_summary')
    .raw()
    .iterate() as IterableIterator<[number, string, string]>;
  for (const [rid, latText, lonText] of rows) {
    const lat = JSON.parse(latText) as number | null,
      lon = JSON.parse(lonText) as number | null;
    if (lat === null || lon === null) continue;
    const v = unitVector(lat, lon);
    x[rid - 1] = v[0];
    y[rid - 1] = v[1];
    z[rid - 1] = v[2];
    const key = `${nearCell(lat)},${nearCell(lon)}`;
    let k = keys.get(key);
    if (k === undefined) keys.set(key, (k = keys.size));
    cellOf[rid - 1] = k;
  }
  const put = db.prepare('INSERT INTO listing_columns (name, data) VALUES (?, ?)');
  const vectors = [x, y, z];
  NEAR_FILTER.columns.forEach((name, i) => {
    put.run(name, blob(vectors[i]));
  });
  const order = writeCells(db, keys, cellOf);
  put.run(NEAR_FILTER.cellOrder, blob(order));
  NEAR_FILTER.cellColumns.forEach((name, i) => {
    put.run(name, blob(Float64Array.from(order, (row) => vectors[i][row])));
  });
}

/** Writes listing_geo_cells in (lat_cell, lon_cell) order and returns the rows in that order (a counting sort). */
function writeCells(db: Database, keys: Map<string, number>, cellOf: Int32Array): Uint32Array {
  const cells = [...keys].map(([key, k]) => {
    const [la, lo] = key.split(',').map(Number);
    return { la, lo, k, n: 0, at: 0 };
  });
  for (let i = 0; i < cellOf.length; i++) if (cellOf[i] >= 0) cells[cellOf[i]].n++;
  const byKey = [...cells];
  cells.sort((a, b) => a.la - b.la || a.lo - b.lo);
  const put = db.prepare('INSERT INTO listing_geo_cells (lat_cell, lon_cell, n) VALUES (?, ?, ?)');
  let total = 0;
  for (const c of cells) {
    put.run(c.la, c.lo, c.n);
    c.at = total;
    total += c.n;
  }
  const order = new Uint32Array(total);
  for (let i = 0; i < cellOf.length; i++) if (cellOf[i] >= 0) order[byKey[cellOf[i]].at++] = i;
  return order;
}
