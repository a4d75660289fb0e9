// /v1/market/metrics: metric discovery and monthly observations from the precomputed city cohorts.
import type { Database } from 'better-sqlite3';
import * as v from 'valibot';
import { Localised, langOfRows, withoutLang } from '../http/content-language.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { date, documented, id120, locale } from '../http/params.ts';
import { bounded } from '../http/respond.ts';
import { defineRoute } from '../http/route.ts';
import { EXAMPLES } from './support/examples.ts';
import { J } from './support/fields.ts';
import { i18nJoin, tr } from './support/i18n-sql.ts';

export const MAX_MONTHS = 24;
const monthIndex = (d: string) => Number(d.slice(0, 4)) * 12 + Number(d.slice(5, 7)) - 1;

const ListQuery = v.strictObject({ locale });
const ObservationsQuery = v.pipe(
  v.strictObject({
    locale,
    location_id: documented(id120, 'The city (an id from /v1/locations of type city).', 'loc_0013'),
    from: documented(date(), 'The first month: the month of this date is the first included.', '2026-01-01'),
    to: documented(
      date(),
      `The last month: the month of this date is the last included. The months of from and to and those between them are at most ${MAX_MONTHS} (2024-02-01 to 2026-01-31 is ${MAX_MONTHS}; 2024-01-01 to 2026-01-01 is ${MAX_MONTHS + 1}, a 400); to is not before from.`,
      '2026-06-30',
    ),
  }),
  v.forward(
    v.partialCheck([['from'], ['to']], (i) => i.from <= i.to, 'must not be after to'),
    ['from'],
  ),
  v.forward(
    v.partialCheck(
      [['from'], ['to']],
      (i) => monthIndex(i.to) - monthIndex(i.from) + 1 <= MAX_MONTHS,
      `must be at most ${MAX_MONTHS - 1} months before to: the range spans at most ${MAX_MONTHS} calendar months, both included`,
    ),
    ['from'],
  ),
);

export function prepare(db: Database) {
  return {
    metrics: db.prepare(`SELECT m.id, ${tr('m', ['name', 'description'])}, m.unit, m.min_sample_size
      FROM metrics m ${i18nJoin('metrics', 'm')} ORDER BY m.id`),
    metric: db.prepare('SELECT id FROM metrics WHERE id = ?').pluck(),
    location: db.prepare('SELECT type FROM locations WHERE id = ? AND published = 1').pluck(),
    observations: db.prepare(`SELECT month AS date, value, sample_size FROM market_observations
      WHERE metric_id = @metric AND city_id = @city AND month BETWEEN @from AND @to ORDER BY month`),
  };
}

const METRIC = J.object(
  { id: { type: 'string' }, name: J.str, description: J.str, unit: J.str, min_sample_size: { type: 'integer' } },
  { examples: EXAMPLES.metrics },
);
const OBSERVATION = J.object(
  { date: { type: 'string', format: 'date' }, value: { type: 'number' }, sample_size: { type: 'integer' } },
  { examples: EXAMPLES.observations },
);

export const routes = () => [
  defineRoute<v.InferOutput<typeof ListQuery>>({
    path: '/v1/market/metrics',
    tag: 'Market',
    kind: 'bounded',
    query: ListQuery,
    item: METRIC,
    summary: 'The market indicators that have observations',
    description:
      'Every indicator, in ascending id order, with its unit and the smallest monthly sample it is published for. All of them fit in one answer: no paging.',
    handle(ctx) {
      const rows = ctx.snap.use(prepare).metrics.all({ locale: ctx.meta.locale }) as Record<string, unknown>[];
      return new Localised(bounded(rows.map(withoutLang), ctx.meta), langOfRows(rows));
    },
  }),
  defineRoute<v.InferOutput<typeof ObservationsQuery>>({
    path: '/v1/market/metrics/:id/observations',
    record: 'metric',
    tag: 'Market',
    kind: 'bounded',
    query: ObservationsQuery,
    item: OBSERVATION,
    summary: 'Monthly observations of one indicator for one city',
    description:
      "Cohorts of published rent listings (active or not) by the month they were first seen. date is the first day of the month; a month is included when it lies between the months of from and to (inclusive); the range spans at most 24 months. Months whose sample is below the indicator's minimum are omitted.",
    handle(ctx) {
      const st = ctx.snap.use(prepare);
      if (!st.metric.get(ctx.params.id)) throw notFound('metric');
      const type = st.location.get(ctx.query.location_id) as string | undefined;
      if (type === undefined)
        throw badRequest(`Parameter "location_id" names no known location (got "${ctx.query.location_id}").`);
      if (type !== 'city')
        throw badRequest(`Parameter "location_id" must be a city; "${ctx.query.location_id}" is a ${type}.`);
      const rows = st.observations.all({
        metric: ctx.params.id,
        city: ctx.query.location_id,
        from: `${ctx.query.from.slice(0, 7)}-01`,
        to: `${ctx.query.to.slice(0, 7)}-01`,
      });
      return bounded(rows, ctx.meta);
    },
  }),
];
