// The generator's listings: one record per index, every random draw from the 'listings' stream in a fixed order
// (status, place and owner, dwelling and price, address, dates, attributes, text, images, sources, the record's
// own nulls), so the same seed gives the same file byte for byte.
import type { ListingRec } from '../build-snapshot/source-schema.ts';
import {
  ADJECTIVES,
  FEATURES,
  type ListingText,
  listingDescription,
  listingTitle,
  PROPERTY_TYPES,
  type PropertyType,
  RARE,
  SURROUNDINGS,
} from './listing-text.ts';
import { CITIES, type CityDef, type Geography, type Place } from './places.ts';
import {
  chance,
  DAY_MS,
  int,
  iso,
  isoDate,
  localized,
  normal,
  pad,
  pick,
  pickLocales,
  REFERENCE_MS,
  type Rng,
  rngFor,
  round,
  slugify,
  Weighted,
} from './random.ts';
import { LISTING_SOURCE_PLATFORMS, type OwnerInfo, type Owners } from './resources.ts';

const ENERGY = Weighted.of([
  ['A+++', 2],
  ['A++', 4],
  ['A+', 6],
  ['A', 30],
  ['B', 17],
  ['C', 18],
  ['D', 10],
  ['E', 6],
  ['F', 4],
  ['G', 3],
] as const);
const TYPE = new Weighted(
  PROPERTY_TYPES,
  PROPERTY_TYPES.map((t) => t.share),
);
const ADJ = new Weighted(
  ADJECTIVES,
  ADJECTIVES.map((a) => a.weight),
);
type Furnishing = 'SHELL' | 'UPHOLSTERED' | 'FURNISHED' | null;
const FURNISHING = Weighted.of<Furnishing>([
  ['SHELL', 30],
  ['UPHOLSTERED', 45],
  ['FURNISHED', 22],
  [null, 3],
]);
const FURNISHING_SMALL = Weighted.of<Furnishing>([
  ['SHELL', 10],
  ['UPHOLSTERED', 42],
  ['FURNISHED', 45],
  [null, 3],
]);
const IMAGES = Weighted.of([
  [0, 8],
  [1, 10],
  [2, 12],
  [3, 15],
  [4, 20],
  [5, 20],
  [6, 15],
] as const);
const ROOMS: Record<string, Weighted<number>> = {
  apartment: Weighted.of([
    [1, 6],
    [2, 36],
    [3, 36],
    [4, 17],
    [5, 5],
  ]),
  house: Weighted.of([
    [3, 15],
    [4, 35],
    [5, 30],
    [6, 12],
    [7, 5],
    [8, 3],
  ]),
  maisonette: Weighted.of([
    [3, 40],
    [4, 40],
    [5, 20],
  ]),
  penthouse: Weighted.of([
    [2, 20],
    [3, 40],
    [4, 30],
    [5, 10],
  ]),
};
const PRICE_TYPE: Record<string, number> = {
  apartment: 1,
  studio: 1.05,
  room: 1,
  house: 0.95,
  maisonette: 1,
  penthouse: 1.35,
};
/** Scales the per-city median so that a city's realised median rent lands near its CITIES[].medianRent. */
const PRICE_CALIBRATION = 0.97;
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const SUFFIXES = ['A', 'B', 'C', '-1', '-2', '-3', '-H', 'bis'];
const HISTORY_MS = REFERENCE_MS - Date.UTC(2023, 9, 31); // 36 months

function sizeFor(rng: Rng, t: PropertyType, rooms: number): number {
  let m2: number;
  switch (t.code) {
    case 'studio':
      m2 = 31 + 5 * normal(rng);
      break;
    case 'room':
      m2 = 20 + 12 * rng();
      break;
    case 'house':
      m2 = (30 + rooms * 22) * Math.exp(0.15 * normal(rng));
      break;
    case 'penthouse':
      m2 = (40 + rooms * 30) * Math.exp(0.15 * normal(rng));
      break;
    default:
      m2 = (18 + rooms * 24) * Math.exp(0.15 * normal(rng));
  }
  return Math.round(Math.min(250, Math.max(20, m2)));
}

type Rare = (typeof RARE)[number] | null;
type Offer = 'rent' | 'sale';

/**
 * Status mix: ~75% active published rent; the rest inactive, unpublished or for sale. Rare-word listings are
 * always active, published rentals so full-text benchmarks find them.
 */
function statusOf(rng: Rng, rare: Rare) {
  let offer: Offer = 'rent';
  let active = true;
  let published = true;
  const s = rng();
  if (!rare) {
    if (s < 0.75) {
      /* active published rent */
    } else if (s < 0.87) active = false;
    else if (s < 0.91) published = false;
    else if (s < 0.93) {
      active = false;
      published = false;
    } else if (s < 0.98) offer = 'sale';
    else {
      offer = 'sale';
      active = false;
      published = rng() < 0.5;
    }
  }
  return { offer, active, published };
}

/** City first (Zipf over CITIES order), then an owner: ~5% none, else nationwide or local to the city; then the place. */
function whereAndWhose(rng: Rng, cityPicker: Weighted<number>, geo: Geography, owners: Owners) {
  const ci = cityPicker.pick(rng);
  const o = rng();
  const local = owners.local[ci];
  const ownerIdx = o < 0.05 ? -1 : o < 0.43 || !local ? owners.national.pick(rng) : local.pick(rng);
  const owner = ownerIdx >= 0 ? owners.info[ownerIdx]! : null;
  const city = CITIES[ci]!;
  const places = geo.places[ci]!;
  const place =
    places.length > 1 && chance(rng, 0.7) ? places[1 + Math.floor(rng() * (places.length - 1))]! : places[0]!;
  return { owner, city, place };
}

/** Type, rooms, size and furnishing, and an asking price from the city's median rent scaled by all four. */
function dwellingOf(rng: Rng, city: CityDef, offer: Offer) {
  const type = TYPE.pick(rng);
  const rooms = type.code === 'studio' || type.code === 'room' ? 1 : ROOMS[type.code]!.pick(rng);
  const size = sizeFor(rng, type, rooms);
  const furnishing = (type.code === 'room' || type.code === 'studio' ? FURNISHING_SMALL : FURNISHING).pick(rng);
  const furnMult = furnishing === 'FURNISHED' ? 1.08 : furnishing === 'SHELL' ? 0.95 : 1;
  const rent =
    city.medianRent *
    PRICE_CALIBRATION *
    (size / 75) ** 0.65 *
    PRICE_TYPE[type.code]! *
    furnMult *
    Math.exp(0.18 * normal(rng));
  let price = Math.min(20_000, Math.max(300, rent));
  price =
    offer === 'sale'
      ? Math.round((price * int(rng, 190, 260)) / 1000) * 1000
      : chance(rng, 0.5)
        ? Math.round(price / 25) * 25
        : Math.round(price);
  return { type, rooms, size, furnishing, price };
}

/** Street and number, postcode (a combination PostNL uses) and coordinates around the place. */
function addressOf(rng: Rng, place: Place) {
  const street = chance(rng, 0.01) ? null : pick(rng, place.streets);
  const num = 1 + Math.min(399, Math.floor(-Math.log(1 - rng()) * 45));
  const number = street === null ? null : chance(rng, 0.15) ? `${num}${pick(rng, SUFFIXES)}` : String(num);
  const pc = int(rng, place.range[0], place.range[1]);
  let letters = LETTERS[int(rng, 0, 25)]! + LETTERS[int(rng, 0, 25)]!;
  if (letters === 'SA' || letters === 'SD' || letters === 'SS') letters = 'ST'; // combinations PostNL does not use
  const postcode = chance(rng, 0.02) ? null : `${pc} ${letters}`;
  const hasCoords = !chance(rng, 0.01);
  const lat = round(place.lat + normal(rng) * place.spread, 6);
  const lon = round(place.lon + normal(rng) * place.spread * 1.6, 6);
  return { street, number, postcode, latitude: hasCoords ? lat : null, longitude: hasCoords ? lon : null };
}

/** first_seen_at over the 36 months before the reference date, slightly more recent listings than old ones. */
function datesOf(rng: Rng, active: boolean) {
  const first = REFERENCE_MS - 60_000 - Math.floor(rng() ** 1.15 * (HISTORY_MS - 60_000));
  const left = REFERENCE_MS - first;
  const updated = !active
    ? first + Math.min(left, int(rng, 7, 120) * DAY_MS + int(rng, 0, 86_399) * 1000)
    : chance(rng, 0.25)
      ? first
      : first + Math.min(left, Math.floor(-Math.log(1 - rng()) * 20 * DAY_MS));
  return { first, updated };
}

/** Attributes (also feed the description's terms sentence), or null for a quarter of listings. */
function attributesOf(rng: Rng, type: PropertyType, offer: Offer, first: number): Record<string, unknown> | null {
  if (chance(rng, 0.25)) return null;
  const a: Record<string, unknown> = {};
  if (chance(rng, 0.6)) a.year_built = type.code === 'penthouse' ? int(rng, 1995, 2025) : int(rng, 1880, 2025);
  if (type.code !== 'house' && chance(rng, 0.6)) a.floor = type.code === 'penthouse' ? int(rng, 5, 20) : int(rng, 0, 6);
  if (chance(rng, 0.4)) a.pets_allowed = chance(rng, 0.35);
  if (offer === 'rent' && chance(rng, 0.5)) a.service_costs_eur = 5 * int(rng, 0, 40);
  if (offer === 'rent' && chance(rng, 0.4)) a.deposit_months = pick(rng, [1, 2, 2, 2]);
  if (chance(rng, 0.3)) a.available_from = isoDate(first + int(rng, 0, 60) * DAY_MS);
  if (offer === 'rent' && chance(rng, 0.3)) a.min_contract_months = pick(rng, [6, 12, 12, 24]);
  return Object.keys(a).length > 0 ? a : null;
}

/** Title and description in the listing's locales, from the text's ingredients. */
function textsOf(
  rng: Rng,
  d: ReturnType<typeof dwellingOf>,
  where: { place: Place; city: CityDef },
  offer: Offer,
  rare: Rare,
  attributes: Record<string, unknown> | null,
) {
  const text: ListingText = {
    type: d.type,
    adjective: ADJ.pick(rng),
    rooms: d.rooms,
    size: d.size,
    area: where.place.area,
    city: where.city.name,
    offer,
    furnishing: d.furnishing,
    features: FEATURES.filter((f) => rng() < f.p),
    surroundings: pick(rng, SURROUNDINGS),
    bright: chance(rng, 0.3),
    rare,
    serviceCosts: (attributes?.service_costs_eur as number | undefined) ?? null,
    depositMonths: (attributes?.deposit_months as number | undefined) ?? null,
    markdown: chance(rng, 0.3),
  };
  const locales = pickLocales(rng, { nl: 0.4, de: 0.15, fr: 0.1, es: 0.1 });
  const title = localized(locales, (l) => listingTitle(text, l));
  const description = !rare && chance(rng, 0.02) ? null : localized(locales, (l) => listingDescription(text, l));
  return { title, description };
}

function imagesOf(rng: Rng, id: string): string[] | null {
  const nImages = IMAGES.pick(rng);
  const images: string[] | null = nImages === 0 && chance(rng, 0.5) ? null : [];
  for (let k = 1; k <= nImages; k++) images!.push(`https://images.example.nl/listings/${id}/${k}.jpg`);
  return images;
}

/** Where the listing was found: the owner's own site for agencies and housing corporations, and a platform. */
function sourcesOf(rng: Rng, id: string, owner: OwnerInfo | null) {
  if (chance(rng, 0.03)) return null;
  const platform = pick(rng, LISTING_SOURCE_PLATFORMS);
  const sources: { url: string; type: string }[] = [];
  if (owner?.type === 'agency')
    sources.push({ url: `https://${owner.slug}.example.nl/aanbod/${id}`, type: 'agency_site' });
  else if (owner?.type === 'housing_corporation')
    sources.push({ url: `https://woonnet.example.nl/woning/${id}`, type: 'social_housing' });
  if (sources.length === 0 || chance(rng, 0.35))
    sources.push({ url: `https://${platform}.example.nl/listing/${id}`, type: 'platform' });
  return sources;
}

/** The function that makes listing `i` (1-based), drawing from one random stream of `seed`. */
export function makeListingFactory(seed: number, geo: Geography, owners: Owners) {
  const rng = rngFor(seed, 'listings');
  const cityPicker = new Weighted(
    CITIES.map((_c, i) => i),
    CITIES.map((_c, i) => 1 / (i + 1) ** 0.95),
  );

  return (i: number): ListingRec => {
    const id = `lst_${pad(i, 7)}`;
    const rare = RARE.find((r) => i % r.stride === r.offset) ?? null;
    const { offer, active, published } = statusOf(rng, rare);
    const where = whereAndWhose(rng, cityPicker, geo, owners);
    const d = dwellingOf(rng, where.city, offer);
    const address = addressOf(rng, where.place);
    const { first, updated } = datesOf(rng, active);
    const attributes = attributesOf(rng, d.type, offer, first);
    const { title, description } = textsOf(rng, d, where, offer, rare, attributes);
    const images = imagesOf(rng, id);
    const sources = sourcesOf(rng, id, where.owner);
    const firstSeen = iso(first);
    return {
      id,
      slug: `${slugify(title.en)}-${pad(i, 7)}`,
      offer_type: offer,
      active,
      published,
      title,
      description,
      price_eur: chance(rng, 0.015) ? null : d.price,
      size_m2: chance(rng, 0.02) ? null : d.size,
      rooms: chance(rng, 0.01) ? null : d.rooms,
      furnishing: d.furnishing,
      property_type: d.type.code,
      energy_label: chance(rng, 0.08) ? null : ENERGY.pick(rng),
      owner_id: where.owner?.id ?? null,
      location_id: where.place.locationId,
      ...address,
      image_url: images?.[0] ?? null,
      images,
      attributes,
      sources,
      first_seen_at: firstSeen,
      created_at: firstSeen,
      updated_at: iso(updated),
    };
  };
}
