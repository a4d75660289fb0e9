// The planner's side of the near filter: its estimate, listings per cell of latitude and longitude (the compiler's
// listing_geo_cells) summed over the cells a circle's bounding box covers with a 2-D prefix sum, and the SQL function
// an index plan checks it with.
import type { Database } from 'better-sqlite3';
import { type Circle, circleOf, NEAR_FUNCTION, within } from '../../snapshot-format/geo.ts';
import { type Near, nearCell } from '../../snapshot-format/listing-filters.ts';
import type { ListingScan } from './scan.ts';

/** The most grid cells held (8 bytes each): a wider spread of listings is counted in coarser cells. */
const MAX_GRID = 4_000_000;

export class NearCounts {
  private readonly lat0: number;
  private readonly lon0: number;
  private readonly rows: number;
  private readonly cols: number;
  /** Cells of the grid per cell of the table, on each axis. */
  private readonly k: number;
  /** sums[(r + 1) * (cols + 1) + (c + 1)]: listings in grid rows <= r and columns <= c. */
  private readonly sums: Float64Array;

  constructor(db: Database) {
    const cells = db.prepare('SELECT lat_cell, lon_cell, n FROM listing_geo_cells').raw().all() as number[][];
    let latMin = Infinity,
      latMax = -Infinity,
      lonMin = Infinity,
      lonMax = -Infinity;
    for (const [la, lo] of cells) {
      latMin = Math.min(latMin, la);
      latMax = Math.max(latMax, la);
      lonMin = Math.min(lonMin, lo);
      lonMax = Math.max(lonMax, lo);
    }
    if (cells.length === 0) latMin = latMax = lonMin = lonMax = 0;
    const area = (latMax - latMin + 1) * (lonMax - lonMin + 1);
    this.k = Math.max(1, Math.ceil(Math.sqrt(area / MAX_GRID)));
    this.lat0 = latMin;
    this.lon0 = lonMin;
    this.rows = Math.floor((latMax - latMin) / this.k) + 1;
    this.cols = Math.floor((lonMax - lonMin) / this.k) + 1;
    const W = this.cols + 1;
    const sums = new Float64Array((this.rows + 1) * W);
    for (const [la, lo, n] of cells)
      sums[(Math.floor((la - latMin) / this.k) + 1) * W + Math.floor((lo - lonMin) / this.k) + 1] += n;
    for (let r = 1; r <= this.rows; r++)
      for (let c = 1; c <= this.cols; c++)
        sums[r * W + c] += sums[(r - 1) * W + c] + sums[r * W + c - 1] - sums[(r - 1) * W + c - 1];
    this.sums = sums;
  }

  /**
   * Listings estimated within the circle: those of the cells its bounding box touches, times the share of the box
   * the circle covers (π/4). Cells are 0.01° (about 1.1 by 0.7 km in the Netherlands), so a small circle's estimate
   * is high by up to the cells around it.
   */
  estimate(near: Near): number {
    return Math.ceil(this.inBox(near, false) * (Math.PI / 4));
  }

  /** Listings estimated in the circle's band of latitudes, every longitude: what the column scan's loop reads. */
  band(near: Near): number {
    return this.inBox(near, true);
  }

  private inBox(near: Near, band: boolean): number {
    const box = circleOf(near);
    const row = (lat: number) => Math.floor((nearCell(lat) - this.lat0) / this.k);
    const col = (lon: number) => Math.floor((nearCell(lon) - this.lon0) / this.k);
    const r0 = Math.max(0, row(box.latLo)),
      r1 = Math.min(this.rows - 1, row(box.latHi)),
      c0 = band ? 0 : Math.max(0, col(box.lonLo)),
      c1 = band ? this.cols - 1 : Math.min(this.cols - 1, col(box.lonHi));
    if (r0 > r1 || c0 > c1) return 0;
    const W = this.cols + 1,
      s = this.sums;
    return s[(r1 + 1) * W + c1 + 1] - s[r0 * W + c1 + 1] - s[(r1 + 1) * W + c0] + s[r0 * W + c0];
  }
}

/**
 * near_within(rid, lat, lon, km) on the connection (snapshot-format/geo.ts' NEAR_FUNCTION), over the scan's points:
 * an index plan checks near with the very test the column scan applies. The last circle is kept (a statement's
 * rows share it).
 */
export function registerNear(db: Database, scan: ListingScan): void {
  let last: (Near & { circle: Circle }) | null = null;
  db.function(NEAR_FUNCTION, { deterministic: true }, (rid: number, lat: number, lon: number, km: number) => {
    if (last === null || last.lat !== lat || last.lon !== lon || last.km !== km)
      last = { lat, lon, km, circle: circleOf({ lat, lon, km }) };
    const g = scan.points();
    const i = rid - 1;
    return within(last.circle, g.x[i], g.y[i], g.z[i]) ? 1 : 0;
  });
}
