// Every route module, in registration order (a fixed path before a parameterised one).
import type { Database } from 'better-sqlite3';
import type { RouteDef } from '../http/route.ts';
import * as articles from './articles.ts';
import * as changes from './changes.ts';
import * as glossary from './glossary.ts';
import * as health from './health.ts';
import * as insurance from './insurance.ts';
import * as internet from './internet.ts';
import * as listings from './listings.ts';
import * as locations from './locations.ts';
import * as market from './market.ts';
import * as owners from './owners.ts';
import * as ping from './ping.ts';
import * as platforms from './platforms.ts';

export interface RouteModule {
  routes: () => RouteDef[];
  prepare: ((db: Database) => unknown)[];
}
const mod = (m: { routes: () => RouteDef[]; prepare?: (db: Database) => unknown }): RouteModule => ({
  routes: m.routes,
  prepare: m.prepare ? [m.prepare] : [],
});

export const ROUTE_MODULES: RouteModule[] = [
  ping,
  health,
  listings,
  owners,
  internet,
  insurance,
  platforms,
  articles,
  glossary,
  market,
  locations,
  changes,
].map(mod);
