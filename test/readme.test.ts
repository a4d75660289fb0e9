// The README's configuration table is the settings' documentation: every setting of src/config.ts has a row, no row
// names a setting that does not exist, and each row's default is the one the server applies; the endpoint table
// names the listing search's filters as the route declares them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SETTINGS } from '../src/config.ts';
import { entriesOf } from '../src/http/params.ts';
import { SearchQuery } from '../src/routes/support/listing-query.ts';
import { ROOT } from './support/files.ts';

/** The rows of the table under "## Configuration": [variables, default cell]. */
function configRows(readme: string): [string[], string][] {
  const section = readme.slice(
    readme.indexOf('## Configuration'),
    readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1),
  );
  return section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) => {
      const [names, dflt] = l.split(' | ');
      return [[...names.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]), dflt];
    });
}

/** A setting whose default is computed where the server runs, so the README says it in words. */
const COMPUTED = new Set(['WORKERS']);

describe('README configuration table', () => {
  const rows = configRows(readFileSync(join(ROOT, 'README.md'), 'utf8'));

  it('has one row for every setting, and no row for a setting that does not exist', () => {
    const documented = rows.flatMap(([names]) => names);
    assert.deepEqual([...documented].sort(), Object.keys(SETTINGS).sort());
  });

  it("gives each setting's default as the server applies it", () => {
    for (const [names, cell] of rows) {
      const parts = cell.split(/, (?=`|unset|random)/);
      names.forEach((name, i) => {
        const part = (parts.length === names.length ? parts[i] : parts[0]).trim();
        const d = SETTINGS[name as keyof typeof SETTINGS].default;
        if (COMPUTED.has(name)) return;
        if (d === undefined)
          assert.match(part, /^(unset|random)/, `${name}: "${part}" should say it is unset by default`);
        else assert.ok(part.includes(`\`${d}\``), `${name}: "${part}" should give the default \`${d}\``);
      });
    }
  });
});

describe('README endpoint table', () => {
  it("names exactly the listing search's filters, as the route declares them", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const row = readme.split('\n').find((l) => l.startsWith('| `/v1/listings` |'));
    assert.ok(row, 'README has a row for /v1/listings');
    const named = [...row.slice(row.indexOf('filters:')).matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    const params = Object.keys(entriesOf(SearchQuery)).filter((k) => !['locale', 'limit', 'cursor'].includes(k));
    assert.deepEqual([...named].sort(), params.sort());
  });
});
