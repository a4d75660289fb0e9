// The service's routes in precedence order: every endpoint, the docs page, and the OpenAPI document describing them.
import type { AppDeps, RouteDef } from '../http/route.ts';
import * as docs from '../openapi/docs.ts';
import { openapiDocument } from '../openapi/document.ts';
import { ROUTE_MODULES } from '../routes/index.ts';

/** Every route, the document last (it describes the others); each module's statements registered on the snapshot. */
export function serviceRoutes(deps: AppDeps): RouteDef[] {
  for (const m of ROUTE_MODULES) for (const p of m.prepare) deps.snapshots.prepare(p);
  const routes: RouteDef[] = [...ROUTE_MODULES.flatMap((m) => m.routes()), ...docs.routes()];
  routes.push(openapiDocument(routes).route);
  return routes;
}
