// Deterministic generator of synthetic source data (the NDJSON files the snapshot compiler reads).
//
//   npx tsx generate/main.ts --listings N --out DIR [--seed S]
//
// Same N and seed → byte-identical files. Listings are streamed (flat memory, 1,000,000 in well under a minute);
// the small resources do not depend on N, owners scale with it (N/200, at least 30). The format is defined in
// source-schema.ts and documented in data/README.md. A listing is made by listings.ts; static tables live in
// places.ts, listing-text.ts, resources.ts and content.ts.
import { once } from 'node:events';
import { createWriteStream, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { ListingSource, RESOURCES, type ResourceName } from '../build-snapshot/source-schema.ts';
import { buildArticles, buildGlossary } from './content.ts';
import { makeListingFactory } from './listings.ts';
import { buildGeography } from './places.ts';
import { buildInsurance, buildInternet, buildOwners, buildPlatforms, METRICS } from './resources.ts';

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
