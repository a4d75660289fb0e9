// The listing endpoints' query parameters: each filter's parameter (the HTTP half of the filter table in
// snapshot-format/listing-filters.ts), the rules across parameters, and the query of each endpoint.
import * as v from 'valibot';
import { EARTH_RADIUS_KM } from '../../../snapshot-format/geo.ts';
import {
  type FilterParam,
  NEAR_FILTER,
  NEAR_FORM,
  NEAR_PATTERN,
  RANGE_FILTERS,
} from '../../../snapshot-format/listing-filters.ts';
import {
  cursor,
  documented,
  id120,
  int,
  limit,
  locale,
  minMax,
  oneOf,
  qOver,
  str,
  together,
} from '../../http/params.ts';
import { DECIMAL_FORM } from '../../http/query.ts';

const FURNISHING = ['SHELL', 'FURNISHED', 'UPHOLSTERED'] as const;
/** A listing filter on a number: listings without that value never match it. */
const range = (max: number, description: string, example: number) =>
  documented(v.optional(int(0, max)), `${description} A listing without this value never matches.`, example);
const RADIUS_RULE = `must be a decimal number of kilometres (digits, an optional fraction) greater than 0 and at most ${NEAR_FILTER.maxKm}`;
const NEAR_FORM_RULE =
  'must be a latitude and a longitude in decimal degrees, separated by a comma without spaces (e.g. 52.3676,4.9041)';
/** near: the checks name what is wrong; the last is the pattern the OpenAPI document shows (the same rule as a whole). */
const nearPoint = v.pipe(
  v.string(),
  v.minLength(3, NEAR_FORM_RULE),
  v.maxLength(NEAR_FILTER.maxLength, `must be at most ${NEAR_FILTER.maxLength} characters`),
  v.check((s) => NEAR_FORM.test(s), NEAR_FORM_RULE),
  v.check((s) => Math.abs(Number(s.split(',')[0])) <= 90, 'must have a latitude from -90 to 90'),
  v.check((s) => Math.abs(Number(s.split(',')[1])) <= 180, 'must have a longitude from -180 to 180'),
  v.regex(NEAR_PATTERN, 'must be a latitude from -90 to 90 and a longitude from -180 to 180, comma-separated'),
);
/** Each listing filter's parameter: the filter table's (snapshot-format/listing-filters.ts) HTTP half, one for one. */
const FILTER_PARAMS = {
  q: qOver(
    'the title and description in every language, the street, the postcode and the names of the neighbourhood, city and province in every language',
    'balcony',
  ),
  location_id: documented(
    v.optional(id120),
    'Only listings in this location or inside it (an id from /v1/locations: a province, city or neighbourhood; not a slug). An unknown id matches nothing.',
    'loc_0013',
  ),
  owner_id: documented(v.optional(id120), 'Only listings of this owner (an id from /v1/owners).', 'own_00004'),
  min_price: range(10_000_000, 'Only listings asking at least this rent, in euros per month.', 1000),
  max_price: range(10_000_000, 'Only listings asking at most this rent, in euros per month.', 2000),
  min_size: range(10_000_000, 'Only listings of at least this many square metres.', 50),
  max_size: range(10_000_000, 'Only listings of at most this many square metres.', 120),
  min_rooms: range(100, 'Only listings with at least this many rooms (all rooms, not bedrooms).', 3),
  furnishing: documented(
    v.optional(oneOf(FURNISHING, ' (case-sensitive)')),
    'Only listings offered this way: SHELL (bare), UPHOLSTERED (floors, curtains, lights) or FURNISHED.',
    'FURNISHED',
  ),
  property_type: documented(
    v.optional(str(1, 120)),
    'Only listings of this property type (exact match, e.g. apartment, house, studio, room).',
    'apartment',
  ),
  near: documented(
    v.optional(nearPoint),
    `Only listings within radius_km kilometres of this point: latitude,longitude in decimal degrees, a comma and no space. Distance is the great-circle distance on a sphere of radius ${EARTH_RADIUS_KM.toLocaleString('en', { maximumFractionDigits: 4 })} km; a listing without coordinates never matches. Requires radius_km.`,
    '52.3676,4.9041',
  ),
  radius_km: documented(
    v.optional(
      v.pipe(
        v.number(RADIUS_RULE),
        DECIMAL_FORM,
        v.gtValue(0, RADIUS_RULE),
        v.maxValue(NEAR_FILTER.maxKm, RADIUS_RULE),
      ),
    ),
    `The distance from near, in kilometres: a plain decimal (digits and an optional fraction, as in near: no sign, exponent or bare point), more than 0 and at most ${NEAR_FILTER.maxKm} as written. Requires near.`,
    2,
  ),
} satisfies Record<FilterParam, v.GenericSchema>;
const filterEntries = { locale, ...FILTER_PARAMS };
const FilterObject = v.strictObject(filterEntries);
const SearchObject = v.strictObject({ ...filterEntries, limit: limit(100, 20), cursor });
/** The validated filters, as the schema gives them (the one description of what a filter is). */
export type Filters = v.InferOutput<typeof FilterObject>;
export type Search = v.InferOutput<typeof SearchObject>;
/** A range filter's minimum must not exceed its maximum; near and radius_km go together (over Filters or Search). */
const rules = <T extends Filters>() => [
  ...RANGE_FILTERS.flatMap((r) => ('max' in r ? [minMax<T>(r.min, r.max)] : [])),
  together<T>('near', 'radius_km'),
  together<T>('radius_km', 'near'),
];
export const SearchQuery = v.pipe(SearchObject, ...rules<Search>());
export const StatsQuery = v.pipe(FilterObject, ...rules<Filters>());
export const DetailQuery = v.strictObject({ locale });
export const SimilarQuery = v.strictObject({ locale, limit: limit(20, 10) });
