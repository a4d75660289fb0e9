// The OpenAPI links of an operation's 200: where its values lead (the next page, a record's detail and what hangs
// off it, the records its *_id fields name), so that generic clients and test tools can walk real cursors and ids.
import { entriesOf } from '../http/params.ts';
import type { RouteDef } from '../http/route.ts';

/** The operationId of a route (also the document's). */
export const operationIdOf = (path: string) =>
  path
    .replace(/^\/v1\//, '')
    .replace(/\.json$/, '')
    .replace(/[/:]+/g, '_')
    .replace(/_$/, '');

type Link = { operationId: string; parameters: Record<string, string>; description: string };

/** The fields of one data item (a collection's) or of data (a detail's), from the route's item schema. */
const fieldsOf = (r: RouteDef) => Object.keys((r.item as { properties?: Record<string, unknown> }).properties ?? {});

/**
 * The detail route a `<name>_id` field names: a route ending in /<name>s/:id; of several (internet and insurance
 * providers), the one under the same family as `from` (/v1/internet/plans → /v1/internet/providers/:id).
 */
function detailFor(field: string, from: RouteDef, all: RouteDef[]): RouteDef | undefined {
  const name = field.slice(0, -'_id'.length);
  const found = all.filter((x) => x.path.endsWith(`/${name}s/:id`));
  const family = from.path.split('/')[2];
  return found.length === 1 ? found[0] : found.find((x) => x.path.split('/')[2] === family);
}

export function linksOf(r: RouteDef, all: RouteDef[]): Record<string, Link> | undefined {
  if (r.public) return undefined;
  const links: Record<string, Link> = {};
  const many = r.kind === 'collection' || r.kind === 'bounded';
  const item = many ? '$response.body#/data/0' : '$response.body#/data';
  if (r.kind === 'collection') {
    // The same request with the cursor of this page (a changed filter, locale or limit invalidates it).
    const parameters: Record<string, string> = {};
    for (const name of Object.keys(entriesOf(r.query)))
      parameters[name] = name === 'cursor' ? '$response.body#/pagination/next_cursor' : `$request.query.${name}`;
    links.next = {
      operationId: operationIdOf(r.path),
      parameters,
      description: 'The next page: the same request with pagination.next_cursor as cursor (while has_more is true).',
    };
  }
  // A listed record's detail: /v1/owners → /v1/owners/:id; /v1/listings/:id/similar → /v1/listings/:id.
  const base = r.path.endsWith('/:id') ? null : r.path.replace(/\/:id\/[a-z_]+$/, '');
  const detail =
    many && base !== null && fieldsOf(r).includes('id') ? all.find((x) => x.path === `${base}/:id`) : undefined;
  if (detail)
    links.detail = {
      operationId: operationIdOf(detail.path),
      parameters: { id: `${item}/id` },
      description: `The first item's ${detail.record ?? 'record'} in detail.`,
    };
  // What hangs off a record: /v1/listings/:id → /v1/listings/:id/similar.
  if (r.path.endsWith('/:id'))
    for (const sub of all.filter(
      (x) => x.path.startsWith(`${r.path}/`) && !x.path.slice(r.path.length + 1).includes(':'),
    ))
      links[sub.path.slice(r.path.length + 1)] = {
        operationId: operationIdOf(sub.path),
        parameters: { id: '$request.path.id' },
        description: `The ${sub.path.slice(r.path.length + 1)} of this ${r.record ?? 'record'}.`,
      };
  // The records an item names by id (owner_id, provider_id, location_id…).
  for (const field of fieldsOf(r).filter((f) => f.endsWith('_id'))) {
    const target = detailFor(field, r, all);
    if (target)
      links[field.slice(0, -'_id'.length)] = {
        operationId: operationIdOf(target.path),
        parameters: { id: `${item}/${field}` },
        description: `The ${target.record ?? 'record'} that ${many ? "the first item's" : 'its'} ${field} names (a 404 when that record is not public).`,
      };
  }
  return Object.keys(links).length > 0 ? links : undefined;
}
