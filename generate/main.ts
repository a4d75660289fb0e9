// Deterministic generator of synthetic source data (the NDJSON files the snapshot compiler reads).
//
//   npx tsx generate/main.ts --listings N --out DIR [--seed S]
//
// Same N and seed → byte-identical files. Listings are streamed (flat memory, 1,000,000 in well under a minute);
// the small resources do not depend on N, owners scale with it (N/200, at least 30). The format is defined in
// source-schema.ts and documented in data/README.md. Static tables live in places.ts,
// listing-text.ts, resources.ts and content.ts.
import { once } from 'node:events';
import { createWriteStream, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { type ListingRec, ListingSource, RESOURCES, type ResourceName } from '../build-snapshot/source-schema.ts';
import { buildArticles, buildGlossary } from './content.ts';
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
import { buildGeography, CITIES, type Geography } from './places.ts';
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
  rngFor,
  round,
  slugify,
  Weighted,
} from './random.ts';
import {
  buildInsurance,
  buildInternet,
  buildOwners,
  buildPlatforms,
  LISTING_SOURCE_PLATFORMS,
  METRICS,
  type Owners,
} from './resources.ts';

const MAX_LISTINGS = 5_000_000;
const USAGE =
  'usage: npx tsx generate/main.ts --listings N --out DIR [--seed S]\n' +
  `  --listings N  number of listings, a positive integer up to ${MAX_LISTINGS.toLocaleString('en-US')}\n` +
  '  --out DIR     output folder (created if missing; the 11 <resource>.ndjson files in it are replaced)\n' +
  '  --seed S      integer seed, 0-4294967295 (default 1)\n';

function usageError(message: string): never {
  process.stderr.write(`generate: ${message}\n${USAGE}`);
  process.exit(2);
}

function parseCli(): { listings: number; out: string; seed: number } {
  let values: { listings?: string; out?: string; seed?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        listings: { type: 'string' },
        out: { type: 'string' },
        seed: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    usageError((e as Error).message);
  }
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  if (values.listings === undefined) usageError('--listings is required');
  if (!/^\d+$/.test(values.listings) || Number(values.listings) < 1 || Number(values.listings) > MAX_LISTINGS) {
    usageError(`--listings must be a positive integer up to ${MAX_LISTINGS}, got "${values.listings}"`);
  }
  if (values.out === undefined || values.out.trim() === '') usageError('--out is required');
  const existing = statSync(values.out, { throwIfNoEntry: false });
  if (existing && !existing.isDirectory()) usageError(`--out must be a directory, "${values.out}" is a file`);
  const seedText = values.seed ?? '1';
  if (!/^\d+$/.test(seedText) || Number(seedText) > 0xffffffff)
    usageError(`--seed must be an integer 0-4294967295, got "${seedText}"`);
  return { listings: Number(values.listings), out: values.out, seed: Number(seedText) };
}

// ---------------------------------------------------------------------------------------------------- listings

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

function sizeFor(rng: () => number, t: PropertyType, rooms: number): number {
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

function makeListingFactory(seed: number, geo: Geography, owners: Owners) {
  const rng = rngFor(seed, 'listings');
  const cityPicker = new Weighted(
    CITIES.map((_c, i) => i),
    CITIES.map((_c, i) => 1 / (i + 1) ** 0.95),
  );

  return (i: number): ListingRec => {
    const id = `lst_${pad(i, 7)}`;
    const rare = RARE.find((r) => i % r.stride === r.offset) ?? null;

    // Status mix: ~75% active published rent; the rest inactive, unpublished or for sale. Rare-word listings are
    // always active, published rentals so full-text benchmarks find them.
    let offer: 'rent' | 'sale' = 'rent';
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

    // City first (Zipf over CITIES order), then an owner: ~5% none, else nationwide or local to the city.
    const ci = cityPicker.pick(rng);
    const o = rng();
    const local = owners.local[ci];
    const ownerIdx = o < 0.05 ? -1 : o < 0.43 || !local ? owners.national.pick(rng) : local.pick(rng);
    const owner = ownerIdx >= 0 ? owners.info[ownerIdx]! : null;
    const city = CITIES[ci]!;
    const places = geo.places[ci]!;
    const place =
      places.length > 1 && chance(rng, 0.7) ? places[1 + Math.floor(rng() * (places.length - 1))]! : places[0]!;

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

    // first_seen_at over the 36 months before the reference date, slightly more recent listings than old ones.
    const first = REFERENCE_MS - 60_000 - Math.floor(rng() ** 1.15 * (HISTORY_MS - 60_000));
    const left = REFERENCE_MS - first;
    const updated = !active
      ? first + Math.min(left, int(rng, 7, 120) * DAY_MS + int(rng, 0, 86_399) * 1000)
      : chance(rng, 0.25)
        ? first
        : first + Math.min(left, Math.floor(-Math.log(1 - rng()) * 20 * DAY_MS));

    // attributes (also feed the description's terms sentence)
    let attributes: Record<string, unknown> | null = null;
    if (!chance(rng, 0.25)) {
      const a: Record<string, unknown> = {};
      if (chance(rng, 0.6)) a.year_built = type.code === 'penthouse' ? int(rng, 1995, 2025) : int(rng, 1880, 2025);
      if (type.code !== 'house' && chance(rng, 0.6))
        a.floor = type.code === 'penthouse' ? int(rng, 5, 20) : int(rng, 0, 6);
      if (chance(rng, 0.4)) a.pets_allowed = chance(rng, 0.35);
      if (offer === 'rent' && chance(rng, 0.5)) a.service_costs_eur = 5 * int(rng, 0, 40);
      if (offer === 'rent' && chance(rng, 0.4)) a.deposit_months = pick(rng, [1, 2, 2, 2]);
      if (chance(rng, 0.3)) a.available_from = isoDate(first + int(rng, 0, 60) * DAY_MS);
      if (offer === 'rent' && chance(rng, 0.3)) a.min_contract_months = pick(rng, [6, 12, 12, 24]);
      if (Object.keys(a).length > 0) attributes = a;
    }

    const text: ListingText = {
      type,
      adjective: ADJ.pick(rng),
      rooms,
      size,
      area: place.area,
      city: city.name,
      offer,
      furnishing,
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

    const nImages = IMAGES.pick(rng);
    const images: string[] | null = nImages === 0 && chance(rng, 0.5) ? null : [];
    for (let k = 1; k <= nImages; k++) images!.push(`https://images.example.nl/listings/${id}/${k}.jpg`);

    let sources: { url: string; type: string }[] | null = null;
    if (!chance(rng, 0.03)) {
      const platform = pick(rng, LISTING_SOURCE_PLATFORMS);
      sources = [];
      if (owner?.type === 'agency')
        sources.push({ url: `https://${owner.slug}.example.nl/aanbod/${id}`, type: 'agency_site' });
      else if (owner?.type === 'housing_corporation')
        sources.push({ url: `https://woonnet.example.nl/woning/${id}`, type: 'social_housing' });
      if (sources.length === 0 || chance(rng, 0.35))
        sources.push({ url: `https://${platform}.example.nl/listing/${id}`, type: 'platform' });
    }

    const firstSeen = iso(first);
    return {
      id,
      slug: `${slugify(title.en)}-${pad(i, 7)}`,
      offer_type: offer,
      active,
      published,
      title,
      description,
      price_eur: chance(rng, 0.015) ? null : price,
      size_m2: chance(rng, 0.02) ? null : size,
      rooms: chance(rng, 0.01) ? null : rooms,
      furnishing,
      property_type: type.code,
      energy_label: chance(rng, 0.08) ? null : ENERGY.pick(rng),
      owner_id: owner?.id ?? null,
      location_id: place.locationId,
      street,
      number,
      postcode,
      latitude: hasCoords ? lat : null,
      longitude: hasCoords ? lon : null,
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

// ---------------------------------------------------------------------------------------------------- main

function checkAll(name: string, schema: v.GenericSchema, records: readonly unknown[]): void {
  for (const r of records) {
    const res = v.safeParse(schema, r);
    if (!res.success) {
      const issue = res.issues[0];
      throw new Error(
        `generated ${name} record ${(r as { id?: string }).id ?? '?'} fails the schema at ${v.getDotPath(issue) ?? '(root)'}: ${issue.message}`,
      );
    }
  }
}

async function main(): Promise<void> {
  const { listings: n, out, seed } = parseCli();
  const started = performance.now();
  mkdirSync(out, { recursive: true });

  const geo = buildGeography();
  const owners = buildOwners(seed, Math.max(30, Math.round(n / 200)));
  const internet = buildInternet(seed);
  const insurance = buildInsurance(seed);
  const small: Partial<Record<ResourceName, readonly unknown[]>> = {
    locations: geo.records,
    owners: owners.records,
    internet_providers: internet.providers,
    internet_plans: internet.plans,
    insurance_providers: insurance.providers,
    insurance_products: insurance.products,
    platforms: buildPlatforms(seed),
    articles: buildArticles(seed, geo.cityIds),
    glossary: buildGlossary(seed),
    metrics: METRICS,
  };

  const tmp = (file: string) => join(out, `${file}.tmp`);
  const counts: string[] = [];
  let bytes = 0;
  for (const { name, file, schema } of RESOURCES) {
    if (name === 'listings') continue;
    const records = small[name]!;
    checkAll(name, schema, records);
    const body = `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;
    writeFileSync(tmp(file), body);
    bytes += Buffer.byteLength(body);
    counts.push(`${records.length} ${name}`);
  }

  // Listings: streamed in ~256 KB chunks, waiting for 'drain' whenever the stream buffer is full.
  const makeListing = makeListingFactory(seed, geo, owners);
  const ws = createWriteStream(tmp('listings.ndjson'));
  const failed = new Promise<never>((_resolve, reject) => ws.once('error', reject));
  failed.catch(() => {});
  const progressEvery = n >= 200_000 ? 100_000 : Infinity;
  let chunk = '';
  for (let i = 1; i <= n; i++) {
    const rec = makeListing(i);
    if (i <= 1000) checkAll('listings', ListingSource, [rec]);
    chunk += `${JSON.stringify(rec)}\n`;
    if (chunk.length >= 262_144 || i === n) {
      if (!ws.write(chunk)) await Promise.race([once(ws, 'drain'), failed]);
      chunk = '';
    }
    if (i % progressEvery === 0) {
      process.stderr.write(
        `generate: ${i.toLocaleString('en-US')}/${n.toLocaleString('en-US')} listings (${Math.round((100 * i) / n)}%, ${((performance.now() - started) / 1000).toFixed(1)}s)\n`,
      );
    }
  }
  ws.end();
  await Promise.race([once(ws, 'finish'), failed]);
  counts.splice(2, 0, `${n} listings`);

  for (const { file } of RESOURCES) renameSync(tmp(file), join(out, file));
  const listingBytes = statSync(join(out, 'listings.ndjson')).size;
  bytes += listingBytes;
  const mb = (listingBytes / 1e6).toFixed(1);
  process.stderr.write(
    `generate: wrote ${counts.join(', ')} to ${out} (seed ${seed}, ${(bytes / 1e6).toFixed(1)} MB, listings ${mb} MB) in ${((performance.now() - started) / 1000).toFixed(1)}s\n`,
  );
}

main().catch((e: unknown) => {
  const err = e as NodeJS.ErrnoException;
  process.stderr.write(`generate: ${err.code ? err.message : (err.stack ?? String(e))}\n`); // fs errors: message only
  process.exit(1);
});
