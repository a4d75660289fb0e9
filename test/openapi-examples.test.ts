// The OpenAPI document's parameter and 200 examples on the shipped sample (data/): every operation called with its
// examples answers 200, each filter's example finds records, and each 200 example is what the service answers.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { ROOT } from './support/files.ts';
import { withParams } from './support/model.ts';
import { useServer } from './support/server.ts';
import { fixtureSnapshot } from './support/snapshots.ts';

const SAMPLE = join(ROOT, 'data');
const sample = useServer(async () => ({ SNAPSHOT_PATH: (await fixtureSnapshot(SAMPLE)).path }));

describe('the examples on the shipped sample', () => {
  let sampleId = '';
  let doc: any; // the document is made from the routes alone: the sample's is every snapshot's
  before(async () => {
    sampleId = (await fixtureSnapshot(SAMPLE)).result.snapshotId!;
    const res = await sample.get('/v1/openapi.json');
    assert.equal(res.status, 200);
    doc = res.body;
  });
  // The shipped sample is built without --previous: its change history is empty, so /v1/changes is asked for the
  // changes since the sample itself (an empty page), and its records are not looked for.
  const example = (p: any) => (p.name === 'since' ? sampleId : (p.example ?? p.schema.examples[0]));
  const NO_HISTORY = '/v1/changes';
  /** An operation's request with its path parameters' examples and the query parameters `which` picks. */
  const requestOf = (template: string, which: (p: any) => boolean) => {
    const params = doc.paths[template].get.parameters as any[];
    let url = template;
    for (const p of params.filter((x) => x.in === 'path')) url = url.replace(`{${p.name}}`, example(p));
    const query = Object.fromEntries(
      params.filter((p) => p.in === 'query' && p.name !== 'cursor' && which(p)).map((p) => [p.name, example(p)]),
    );
    return withParams(url, query);
  };

  it("answers 200 to every operation called with its parameters' examples", async () => {
    for (const template of Object.keys(doc.paths)) {
      const url = requestOf(template, () => true);
      const res = await sample.get(url);
      assert.equal(res.status, 200, `${url}: ${res.text.slice(0, 300)}`);
    }
  });

  it("finds records on the shipped sample with each filter's example alone", async () => {
    const empty: string[] = [];
    for (const template of Object.keys(doc.paths)) {
      if (template === NO_HISTORY) continue;
      const params = doc.paths[template].get.parameters as any[];
      for (const p of params.filter((x) => x.in === 'query' && !x.required)) {
        if (['cursor', 'limit', 'locale'].includes(p.name)) continue;
        let url = requestOf(template, (x) => x.required === true || x.name === p.name);
        let res = await sample.get(url);
        // A filter given only with another (near with radius_km): its 400 names that one, whose example is added.
        const partner = res.status === 400 ? /must be given with (\w+)/.exec(res.body.error.message)?.[1] : undefined;
        if (partner) {
          url = requestOf(template, (x) => x.required === true || x.name === p.name || x.name === partner);
          res = await sample.get(url);
        }
        assert.equal(res.status, 200, url);
        if (Array.isArray(res.body.data) && res.body.data.length === 0) empty.push(url);
      }
    }
    assert.deepEqual(empty, []);
  });

  /**
   * Where an example differs from what the service answers: a text may be cut (its start, then "…"); the data of a
   * paged collection may show some of its records (found by id, in the order served), a ranked or bounded list of
   * records its first ones, and a list of values (a series) is shown whole. Every other value, list and key (in its
   * order) is as served.
   */
  type Top = 'collection' | 'list' | false;
  function differences(shown: unknown, served: unknown, at: string, top: Top = false): string[] {
    if (typeof shown === 'string' && typeof served === 'string') {
      const cut = shown.endsWith('…') && served.length >= shown.length && served.startsWith(shown.slice(0, -1));
      return shown === served || cut ? [] : [`${at}: shows ${JSON.stringify(shown)}, served ${JSON.stringify(served)}`];
    }
    if (Array.isArray(shown) && Array.isArray(served)) {
      const records = shown.every((x) => typeof x?.id === 'string');
      if (top === 'collection' && records) {
        // Records of a list: each as served, found by its id, in the order served.
        const at2 = shown.map((x) => served.findIndex((y) => y?.id === x.id));
        if (at2.some((i, k) => i === -1 || (k > 0 && i <= at2[k - 1])))
          return [`${at}: shows ids ${shown.map((x) => x.id).join()} (not served in this order: ${at2.join()})`];
        return shown.flatMap((x, k) => differences(x, served[at2[k]], `${at}[${x.id}]`));
      }
      if (top === 'list' && records ? shown.length > served.length : shown.length !== served.length)
        return [`${at}: shows ${shown.length} items, served ${served.length}`];
      return shown.flatMap((x, i) => differences(x, served[i], `${at}[${i}]`));
    }
    if (shown && served && typeof shown === 'object' && typeof served === 'object' && !Array.isArray(served)) {
      const [a, b] = [Object.keys(shown), Object.keys(served)];
      if (a.join() !== b.join()) return [`${at}: shows keys ${a.join()}, served ${b.join()}`];
      return a.flatMap((k) => differences((shown as any)[k], (served as any)[k], `${at}.${k}`));
    }
    return Object.is(shown, served) ? [] : [`${at}: shows ${JSON.stringify(shown)}, served ${JSON.stringify(served)}`];
  }

  it('shows in its 200 examples what the service answers to the example request (long texts cut with "…")', async () => {
    const problems: string[] = [];
    let compared = 0;
    for (const template of Object.keys(doc.paths)) {
      if (template === '/v1/openapi.json') continue; // its example is the document's outline
      if (template === NO_HISTORY) continue;
      const shown = doc.paths[template].get.responses['200'].content['application/json'].example;
      if (shown === undefined) continue;
      // The required parameters only: the answer an example shows is the one to the plainest request.
      const url = requestOf(template, (p) => p.required === true);
      const res = await sample.get(url);
      assert.equal(res.status, 200, url);
      compared++;
      problems.push(
        ...('data' in shown
          ? differences(shown.data, res.body.data, `${url} data`, 'pagination' in shown ? 'collection' : 'list')
          : differences(shown, res.body, `${url} body`)),
      );
    }
    assert.ok(compared >= 20, `${compared} examples compared`);
    assert.deepEqual(problems, []);
  });
});
