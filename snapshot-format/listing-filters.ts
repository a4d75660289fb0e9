// The listing filters, each declared once: its parameters, its column, index and stats scope, by kind (equality,
// range, near a point, q). The SQL (listing-sql.ts), the column scan and planner (src/listings/), the compiler's
// column store and statistics (build-snapshot/) and the route's validation (src/routes/support/listing-query.ts) read this table.

/**
 * Filters on one value of a coded column. `columns` maps each column the filter may compare to its (value, rid)
 * index (location_id names a province, city or neighbourhood: the route picks the column); `scope` is the prefix of
 * the compiler's precomputed statistics for one value of the filter alone ('<scope>:<value>').
 */
export const EQ_FILTERS = [
  {
    key: 'location_id',
    columns: { city_id: 'listings_city', province_id: 'listings_province', neighbourhood_id: 'listings_neighbourhood' },
    scope: 'location',
  },
  { key: 'owner_id', columns: { owner_id: 'listings_owner' }, scope: 'owner_id' },
  { key: 'property_type', columns: { property_type: 'listings_property_type' }, scope: 'property_type' },
  { key: 'furnishing', columns: { furnishing: 'listings_furnishing' }, scope: 'furnishing' },
] as const;

/**
 * Filters on a number: `min` and `max` name the parameters of each bound (a filter may have one), `name` the column
 * scan's array of the column. A listing without the value never matches a bound.
 */
export const RANGE_FILTERS = [
  { name: 'price', column: 'price_eur', index: 'listings_price', min: 'min_price', max: 'max_price' },
  { name: 'size', column: 'size_m2', index: 'listings_size', min: 'min_size', max: 'max_size' },
  { name: 'rooms', column: 'rooms', index: 'listings_rooms', min: 'min_rooms' },
] as const;

/**
 * Listings within `radius_km` (more than 0, at most maxKm) of the point `near` (<lat>,<lon> in decimal degrees), by
 * great-circle distance on a sphere (geo.ts); a listing without coordinates never matches. The compiler stores each
 * listing's point as a unit vector (`columns`, in the column store), counts listings per cell of `cellDegrees`
 * (listing_geo_cells, the planner's estimate) and lists the rows cell by cell (`cellOrder`, with their points in that
 * order: `cellColumns`; the rows of the cells a circle's box covers are a run per row of cells). No index drives it: the column scan's loop reads a band of the
 * vectors, its row sets the box's cell runs, and an index plan driven by another filter checks it per row (geo.ts'
 * near_within).
 */
export const NEAR_FILTER = {
  key: 'near',
  params: ['near', 'radius_km'],
  columns: ['geo_x', 'geo_y', 'geo_z'],
  cellOrder: 'geo_cell_order',
  cellColumns: ['geo_cell_x', 'geo_cell_y', 'geo_cell_z'],
  cellDegrees: 0.01,
  maxKm: 50,
  /** No index drives it: the planner counts its estimate in the matches and the scan's hint only. */
  drivesIndex: false,
  /** An index plan checks it on every row it reads (near_within), at this cost relative to reading the row. */
  checkCost: 0.15,
  /** The longest near text (two decimals of up to ~18 characters and a comma). */
  maxLength: 40,
} as const;

/** The filters an index plan checks row by row (SQL functions over the column store): their checkCost per row. */
export const ROW_CHECKED = [NEAR_FILTER] as const;

/**
 * near's form: two decimal numbers (an optional minus, digits, an optional fraction) and a comma, nothing else. Digits
 * are [0-9], not \d: Python's re (Schemathesis reads the document's pattern) matches any Unicode digit with \d.
 */
export const NEAR_FORM = /^-?[0-9]+(?:\.[0-9]+)?,-?[0-9]+(?:\.[0-9]+)?$/;
/** near's whole rule as one pattern (the OpenAPI document's): NEAR_FORM with a latitude within ±90 and a longitude within ±180. */
export const NEAR_PATTERN =
  /^-?0*(?:90(?:\.0+)?|[1-8]?[0-9](?:\.[0-9]+)?),-?0*(?:180(?:\.0+)?|(?:1[0-7][0-9]|[1-9]?[0-9])(?:\.[0-9]+)?)$/;

/** The cell of a latitude or longitude in listing_geo_cells: floor(degrees / cellDegrees). */
export const nearCell = (degrees: number): number => Math.floor(degrees * Math.round(1 / NEAR_FILTER.cellDegrees));

export type EqKey = (typeof EQ_FILTERS)[number]['key'];
type ColumnsOf<E> = E extends { columns: infer C } ? keyof C : never;
export type EqColumn = ColumnsOf<(typeof EQ_FILTERS)[number]>;
type RangeEntry = (typeof RANGE_FILTERS)[number];
export type RangeCol = RangeEntry['column'];
export type RangeName = RangeEntry['name'];
export type RangeParam = RangeEntry['min'] | Extract<RangeEntry, { max: string }>['max'];
/** Every query parameter of a listing search that filters (beside locale, limit and cursor). */
export type FilterParam = 'q' | EqKey | RangeParam | (typeof NEAR_FILTER)['params'][number];

export type LocationColumn = keyof (typeof EQ_FILTERS)[0]['columns'];
/** A point and a radius: listings within km kilometres of (lat, lon). */
export interface Near {
  lat: number;
  lon: number;
  km: number;
}
/** Validated listing filters, as the route passes them (absent = not filtered). */
export type ListingFilters = {
  fts?: { expr: string; terms: string[] };
  location_column?: LocationColumn;
  near?: Near;
} & { [K in EqKey]?: string } & { [K in RangeParam]?: number };

/** The column an equality filter compares (location_id's is the route's choice). */
export const eqColumn = (k: EqKey, f: ListingFilters): EqColumn =>
  k === 'location_id' ? f.location_column! : (k as Exclude<EqKey, 'location_id'>);

/** The (value, rid) index of each filter column: the planner's drivers, and the compiler's column store. */
export const INDEX_OF: Record<string, string> = Object.fromEntries([
  ...EQ_FILTERS.flatMap((e) => Object.entries(e.columns)),
  ...RANGE_FILTERS.map((r) => [r.column, r.index]),
]);
/** The coded columns (equality filters), in table order. */
export const CODED_COLUMNS = EQ_FILTERS.flatMap((e) => Object.keys(e.columns)) as EqColumn[];
/** The float columns (range filters), in table order. */
export const FLOAT_COLUMNS = RANGE_FILTERS.map((r) => r.column);
/**
 * Each coded column and the scope prefix of its precomputed statistics: 'location:<id>' for a location at any level
 * (ids are unique across levels), '<key>:<value>' for the others.
 */
export const VALUE_STATS_COLUMNS: [column: string, prefix: string][] = EQ_FILTERS.flatMap((e) =>
  Object.keys(e.columns).map((c): [string, string] => [c, e.scope]),
);

/** The range bounds of a filter set on one range filter ([-Infinity, Infinity] for an absent bound). */
export function boundsOf(r: RangeEntry, f: ListingFilters): { lo: number; hi: number } | null {
  const lo = f[r.min];
  const hi = 'max' in r ? f[r.max] : undefined;
  if (lo === undefined && hi === undefined) return null;
  return { lo: lo ?? -Infinity, hi: hi ?? Infinity };
}

/** The filters a filter set holds (location_column is location_id's detail, not a filter of its own). */
export function presentFilters(f: ListingFilters): (keyof ListingFilters)[] {
  return (Object.keys(f) as (keyof ListingFilters)[]).filter((k) => f[k] !== undefined && k !== 'location_column');
}

/**
 * The precomputed statistics' scope of a filter set the compiler has them for: no filter (''), or one equality
 * filter alone ('<scope>:<value>'); null for any other filter set.
 */
export function statsScope(f: ListingFilters): string | null {
  const present = presentFilters(f);
  if (present.length === 0) return '';
  if (present.length > 1) return null;
  const eq = EQ_FILTERS.find((e) => e.key === present[0]);
  return eq ? `${eq.scope}:${f[eq.key]}` : null;
}
