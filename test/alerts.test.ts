// deploy/prometheus/alerts.yml: promtool accepts it and its unit tests (alerts.test.yml) pass, every alert has a case
// that expects it, and every series the rules, the cases and the Grafana dashboard (deploy/grafana) name is one the
// service exports: checked against the /metrics of the real service (WORKERS=2 on METRICS_PORT, so the cluster's
// series and the worker label are there). The dashboard's queries also pass promtool, as recording rules.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, tempDir } from './support/files.ts';
import { get, missing, spawnService, until } from './support/processes.ts';
import { rawServer } from './support/server.ts';

/** A minisign public key (any: nothing is verified here). */
const KEY = 'RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3';

const DIR = join(ROOT, 'deploy/prometheus');
const rules = readFileSync(join(DIR, 'alerts.yml'), 'utf8');
const cases = readFileSync(join(DIR, 'alerts.test.yml'), 'utf8');
const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy/grafana/nl-rental-api.json'), 'utf8'));
/** The dashboard's PromQL: each panel's targets and each templating query. */
const dashboardQueries: string[] = [
  ...dashboard.panels.flatMap((p: { targets: { expr: string }[] }) => p.targets.map((t) => t.expr)),
  ...dashboard.templating.list
    .filter((v: { type: string }) => v.type === 'query')
    .map((v: { query: string }) => v.query),
];

/** Every series the rules and their cases name: kept explicit, so a new name is a visible change here. */
const EXPECTED = [
  'nlr_cluster_worker_drains_cut_total',
  'nlr_cluster_worker_restarts_total',
  'nlr_cluster_workers_behind',
  'nlr_follow_last_success_time_seconds',
  'nlr_follow_refused',
  'nlr_follow_stale',
  'nlr_http_requests_total',
  'nlr_key_store_readable',
  'nlr_snapshot_path_refused',
  'nlr_snapshot_serving',
];
/** Labels a scrape adds (not the service's). */
const SCRAPE_LABELS = new Set(['instance', 'job']);

const promtool = (...args: string[]) => spawnSync('/usr/bin/promtool', args, { cwd: DIR, encoding: 'utf8' });
const alertNames = () => [...rules.matchAll(/^\s+- alert: (\w+)$/gm)].map((m) => m[1]);
/** The input series of the cases: name and label names. */
const inputSeries = () =>
  [...cases.matchAll(/^\s+- series: '(\w+)\{([^}]*)\}'$/gm)].map((m) => ({
    name: m[1],
    labels: [...m[2].matchAll(/(\w+)="/g)].map((l) => l[1]),
  }));
const namesIn = (text: string) => new Set([...text.matchAll(/\bnlr_[a-z0-9_]+/g)].map((m) => m[0]));

describe('Prometheus alerting rules', { skip: missing('/usr/bin/promtool', 'prometheus') }, () => {
  it('pass promtool check rules and every case of promtool test rules', () => {
    const check = promtool('check', 'rules', 'alerts.yml');
    assert.equal(check.status, 0, check.stdout + check.stderr);
    const test = promtool('test', 'rules', 'alerts.test.yml');
    assert.equal(test.status, 0, test.stdout + test.stderr);
    assert.match(test.stdout, /SUCCESS/);
  });

  it('have, each, a case that expects the alert to fire', () => {
    const names = alertNames();
    assert.ok(names.length >= 7, names.join(', '));
    const firing = new Set([...cases.matchAll(/alertname: (\w+)\n\s+exp_alerts:\n\s+- exp_labels:/g)].map((m) => m[1]));
    for (const name of names) assert.ok(firing.has(name), `no case expects ${name} to fire`);
  });

  it('name only the series listed here', () => {
    const rulesSeries = [...rules.matchAll(/^\s+expr: [^\n]*(?:\n\s{10,}[^\n]*)*/gm)].map((m) => m[0]).join('\n');
    assert.deepEqual([...namesIn(rulesSeries)].sort(), EXPECTED);
    assert.deepEqual([...new Set(inputSeries().map((s) => s.name))].sort(), EXPECTED);
  });

  it("the Grafana dashboard's queries are PromQL that promtool accepts", () => {
    const exprs = dashboardQueries.filter((q) => !q.startsWith('label_values('));
    assert.ok(exprs.length >= 10);
    // Grafana's variables as a query would have them: a rate interval and the regexes of "All".
    const rules = exprs.map(
      (q, i) =>
        `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(q.replaceAll('$__rate_interval', '1m').replace(/\$(job|instance)\b/g, '.*'))}`,
    );
    const file = join(tempDir('dashboard-rules-'), 'queries.yml');
    writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`);
    const check = spawnSync('/usr/bin/promtool', ['check', 'rules', file], { encoding: 'utf8' });
    assert.equal(check.status, 0, check.stdout + check.stderr);
  });

  it('name series, and labels, that a live /metrics of the service exports', async () => {
    // It follows a publication whose latest.json is not valid: the follow series are there, a refusal among them.
    const publisher = await rawServer((_req, res) => res.end('{"format": 2}'));
    const main = await spawnService({
      WORKERS: '2',
      METRICS_PORT: '0',
      CURSOR_SECRET: 'alerts-test-secret-0123456789',
      SNAPSHOT_FOLLOW: `${publisher.url}/latest.json`,
      SNAPSHOT_FOLLOW_PUBLIC_KEY: KEY,
      SNAPSHOT_FOLLOW_INTERVAL_MS: '100',
    });
    try {
      await until('a refusal of latest.json', async () =>
        /nlr_follow_refused\{[^}]*\} 1/.test(await (await fetch(main.metricsUrl!)).text()),
      );
      assert.equal((await get(`${main.url}/v1/ping`, null)).status, 200); // so that the request counter has a series
      const text = await (await fetch(main.metricsUrl!)).text();
      const live = new Map<string, Set<string>>();
      for (const m of text.matchAll(/^# TYPE (\w+) /gm)) live.set(m[1], new Set());
      for (const m of text.matchAll(/^(\w+)\{([^}]*)\} /gm)) {
        if (!live.has(m[1])) live.set(m[1], new Set()); // a histogram's _bucket, _sum, _count
        for (const l of m[2].matchAll(/(\w+)="/g)) live.get(m[1])!.add(l[1]);
      }
      for (const name of EXPECTED) assert.ok(live.has(name), `${name} is not in the service's /metrics`);
      const onDashboard = namesIn(dashboardQueries.join('\n'));
      assert.ok(onDashboard.size >= 10, [...onDashboard].join(', '));
      for (const name of onDashboard) assert.ok(live.has(name), `the dashboard's ${name} is not in /metrics`);
      for (const s of inputSeries()) {
        assert.ok(live.has(s.name), `the cases' ${s.name} is not in /metrics`);
        for (const label of s.labels)
          if (!SCRAPE_LABELS.has(label))
            assert.ok(live.get(s.name)!.has(label), `${s.name} has no label ${label} in /metrics`);
      }
    } finally {
      await main.stop();
      await publisher.close();
    }
  });
});
