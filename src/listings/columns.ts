// The listing filter columns, read once from the snapshot into typed arrays (see ListingScan).
import type { Database } from 'better-sqlite3';
import { NEAR_FILTER } from '../../snapshot-format/listing-filters.ts';
import type { Columns, GeoCells, GeoColumns } from './scan-loops.ts';

type Typed = Float64Array | Uint16Array | Uint32Array;

/**
 * A reader of listing_columns' blobs by name, each copied into a fresh (aligned) typed array of the kind asked: a
 * Buffer from SQLite may start at any byte offset.
 */
function columnReader(db: Database) {
  const get = db.prepare('SELECT data FROM listing_columns WHERE name = ?').pluck();
  return <T extends Typed>(Kind: { new (n: number): T; BYTES_PER_ELEMENT: number }, name: string): T => {
    const b = get.get(name) as Buffer;
    const a = new Kind(b.byteLength / Kind.BYTES_PER_ELEMENT);
    new Uint8Array(a.buffer).set(b);
    return a;
  };
}

/** Every filter column of listing_columns, copied into fresh (aligned) typed arrays. */
export function loadColumns(db: Database): Columns {
  const read = columnReader(db);
  const [f64, u16, u32] = [
    (name: string) => read(Float64Array, name),
    (name: string) => read(Uint16Array, name),
    (name: string) => read(Uint32Array, name),
  ];
  const price = f64('price_eur');
  return {
    n: price.length,
    price,
    size: f64('size_m2'),
    rooms: f64('rooms'),
    city_id: u16('city_id'),
    province_id: u16('province_id'),
    neighbourhood_id: u16('neighbourhood_id'),
    property_type: u16('property_type'),
    furnishing: u16('furnishing'),
    owner_id: u32('owner_id'),
    order: u32('price_order'),
    rank: u32('price_rank'),
    sizeOrder: u32('size_order'),
  };
}

/** The near filter's columns: the points in row order and in cell order, and listing_geo_cells (see GeoCells). */
export function loadGeo(db: Database): GeoColumns {
  const read = columnReader(db);
  const f64 = (name: string) => read(Float64Array, name);
  const order = read(Uint32Array, NEAR_FILTER.cellOrder);
  const [x, y, z] = NEAR_FILTER.columns.map(f64);
  const [cx, cy, cz] = NEAR_FILTER.cellColumns.map(f64);
  return { x, y, z, cells: { ...geoCells(db), order, x: cx, y: cy, z: cz } };
}

/** listing_geo_cells in (lat_cell, lon_cell) order, with where each cell's rows start in the cell order. */
function geoCells(db: Database): Pick<GeoCells, 'lat' | 'lon' | 'start'> {
  const rows = db
    .prepare('SELECT lat_cell, lon_cell, n FROM listing_geo_cells ORDER BY lat_cell, lon_cell')
    .raw()
    .all() as number[][];
  const lat = new Int32Array(rows.length),
    lon = new Int32Array(rows.length),
    start = new Uint32Array(rows.length + 1);
  rows.forEach(([la, lo, n], k) => {
    lat[k] = la;
    lon[k] = lo;
    start[k + 1] = start[k] + n;
  });
  return { lat, lon, start };
}
