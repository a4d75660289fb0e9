// The market cohorts: rent listings grouped by city and first-seen month while the source streams, and the
// market observations (one per metric, city and month) derived from them.
import type { Database } from 'better-sqlite3';
import { median, round2 } from '../snapshot-format/price-stats.ts';

type Cohort = { n: number; prices: number[]; perM2: number[] };

/** Groups published rent listings (active or not) by city and first-seen month while the source streams. */
export class CohortCollector {
  // city → month → values; prices and price per m² kept as plain arrays (a few numbers per listing).
  groups = new Map<string, Map<string, Cohort>>();
  add(cityId: string, firstSeenAt: string, price: number | null, size: number | null) {
    const month = `${firstSeenAt.slice(0, 7)}-01`;
    let byMonth = this.groups.get(cityId);
    if (!byMonth) this.groups.set(cityId, (byMonth = new Map()));
    let g = byMonth.get(month);
    if (!g) byMonth.set(month, (g = { n: 0, prices: [], perM2: [] }));
    g.n++;
    if (price != null) {
      g.prices.push(price);
      if (size != null && size > 0) g.perM2.push(price / size);
    }
  }
}

/** One metric's value over a cohort and the sample it was computed from (a null value: nothing to compute). */
function aggregate(aggregation: string, g: Cohort): { value: number | null; sample: number } {
  switch (aggregation) {
    case 'count':
      return { value: g.n, sample: g.n };
    case 'median_price_eur':
      return { value: median(g.prices), sample: g.prices.length };
    case 'average_price_eur': {
      const sample = g.prices.length;
      return { value: sample ? g.prices.reduce((a, b) => a + b, 0) / sample : null, sample };
    }
    case 'median_price_per_m2':
      return { value: median(g.perM2), sample: g.perM2.length };
    default:
      throw new Error(`unknown aggregation ${aggregation}`);
  }
}

/** market_observations: every metric over every cohort whose sample reaches the metric's minimum. */
export function deriveCohorts(db: Database, cohorts: CohortCollector) {
  const metrics = db.prepare('SELECT id, aggregation, min_sample_size FROM metrics ORDER BY rid').all() as {
    id: string;
    aggregation: string;
    min_sample_size: number;
  }[];
  const insert = db.prepare(
    'INSERT INTO market_observations (metric_id, city_id, month, value, sample_size) VALUES (?, ?, ?, ?, ?)',
  );
  for (const [city, byMonth] of cohorts.groups) {
    for (const [month, g] of byMonth) {
      for (const m of metrics) {
        const { value, sample } = aggregate(m.aggregation, g);
        if (value === null || sample < m.min_sample_size) continue;
        insert.run(m.id, city, month, round2(value), sample);
      }
    }
  }
}
