// npm run check:imports: the layout's import rules over the real import graph — src/'s floors, the top-level
// folders' bans and no cycle of folders at any level — with the table in scripts/import-layers.ts.
// Biome keeps the file-level cycle rule (noImportCycles); this sees what a file-level rule cannot.
import { pathToFileURL } from 'node:url';
import { type Edge, importGraph } from './import-graph.ts';
import { SRC_FLOORS, TOP_LEVEL_BANS } from './import-layers.ts';

const TABLE = 'scripts/import-layers.ts';

/** One broken rule: the rule's name, and a message naming the importing file, the imported file and the rule. */
export interface Violation {
  rule: 'unresolved' | 'src-unlisted' | 'src-upward' | 'src-same-floor' | 'top-level-ban' | 'folder-cycle';
  message: string;
}

export interface Rules {
  floors: Readonly<Record<number, readonly string[]>>;
  bans: readonly (readonly [string, string, string])[];
}

const where = (e: Edge) => `${e.from}:${e.line}`;

/** A src/ file's unit in the floor table: its folder directly under src/ (`http/`) or itself (`main.ts`). */
function srcUnit(path: string): string | null {
  if (!path.startsWith('src/')) return null;
  const rest = path.slice('src/'.length);
  const slash = rest.indexOf('/');
  return slash === -1 ? rest : rest.slice(0, slash + 1);
}

/** src/'s floors: no upward import, none between two units of one floor, and every unit in the table. */
function floorRules(files: string[], edges: Edge[], floors: Rules['floors']): Violation[] {
  const floorOf = new Map<string, number>();
  for (const [floor, units] of Object.entries(floors)) for (const u of units) floorOf.set(u, Number(floor));
  const out: Violation[] = [];
  const unlisted = new Set<string>();
  for (const f of files) {
    const u = srcUnit(f);
    if (u !== null && !floorOf.has(u) && !unlisted.has(u)) {
      unlisted.add(u);
      out.push({
        rule: 'src-unlisted',
        message: `src-unlisted: src/${u} (${f}) is on no floor: add it to the floor table in ${TABLE}.`,
      });
    }
  }
  for (const e of edges) {
    const a = srcUnit(e.from);
    const b = e.to === null ? null : srcUnit(e.to);
    if (a === null || b === null || a === b || !floorOf.has(a) || !floorOf.has(b)) continue;
    const fa = floorOf.get(a)!;
    const fb = floorOf.get(b)!;
    if (fa < fb)
      out.push({
        rule: 'src-upward',
        message: `src-upward: ${where(e)} imports ${e.to}: src/${a} (floor ${fa}) imports upward from src/${b} (floor ${fb}); a module imports only from a lower floor (${TABLE}).`,
      });
    else if (fa === fb)
      out.push({
        rule: 'src-same-floor',
        message: `src-same-floor: ${where(e)} imports ${e.to}: src/${a} and src/${b} share floor ${fa}, and two units of one floor never import each other (${TABLE}).`,
      });
  }
  return out;
}

/** The top-level folders' bans: `*` as the importer means any folder but the imported one. */
function banRules(edges: Edge[], bans: Rules['bans']): Violation[] {
  const out: Violation[] = [];
  for (const e of edges) {
    if (e.to === null) continue;
    for (const [from, to, why] of bans) {
      const fromMatches = from === '*' ? !e.from.startsWith(to) : e.from.startsWith(from);
      if (fromMatches && e.to.startsWith(to))
        out.push({
          rule: 'top-level-ban',
          message: `top-level-ban: ${where(e)} imports ${e.to}: ${why} (${TABLE})`,
        });
    }
  }
  return out;
}

/**
 * No cycle of folders at any level: in every folder, its entries (subfolders, and files directly in it) form a graph
 * whose arrows are the imports between them; a cycle through at least one subfolder is a folder cycle. (A cycle of
 * files alone is Biome's noImportCycles.)
 */
function cycleRules(edges: Edge[]): Violation[] {
  // Per parent folder: entry → entry → an example import.
  const levels = new Map<string, Map<string, Map<string, Edge>>>();
  for (const e of edges) {
    if (e.to === null || e.to.startsWith('../')) continue;
    const a = e.from.split('/');
    const b = e.to.split('/');
    let d = 0;
    while (d < a.length - 1 && d < b.length - 1 && a[d] === b[d]) d++;
    if (a[d] === b[d]) continue; // the same file
    const parent = a
      .slice(0, d)
      .map((s) => `${s}/`)
      .join('');
    const entry = (parts: string[]) => parent + (d < parts.length - 1 ? `${parts[d]}/` : parts[d]);
    const graph = levels.get(parent) ?? new Map<string, Map<string, Edge>>();
    levels.set(parent, graph);
    const arrows = graph.get(entry(a)) ?? new Map<string, Edge>();
    graph.set(entry(a), arrows);
    if (!arrows.has(entry(b))) arrows.set(entry(b), e);
  }
  const out: Violation[] = [];
  for (const graph of levels.values()) {
    for (const scc of stronglyConnected(graph)) {
      if (scc.length < 2 || !scc.some((n) => n.endsWith('/'))) continue;
      // Every arrow inside the component lies on a cycle: name the shortest one through each arrow, once.
      const members = new Set(scc);
      const seen = new Set<string>();
      for (const u of scc) {
        for (const v of graph.get(u)!.keys()) {
          if (!members.has(v)) continue;
          const cycle = [u, ...shortestPath(graph, members, v, u)];
          if (!cycle.slice(1).some((n) => n.endsWith('/'))) continue; // files only: Biome's noImportCycles
          const first = cycle.indexOf([...cycle.slice(1)].sort()[0], 1);
          const key = [...cycle.slice(first), ...cycle.slice(1, first)].join(' ');
          if (seen.has(key)) continue;
          seen.add(key);
          const arrows = cycle.slice(1).map((to, i) => graph.get(cycle[i])!.get(to)!);
          out.push({
            rule: 'folder-cycle',
            message: `folder-cycle: ${cycle.join(' → ')}: ${arrows.map((e) => `${where(e)} imports ${e.to}`).join('; ')}.`,
          });
        }
      }
    }
  }
  return out;
}

/** Tarjan's strongly connected components of a graph given as node → successors, each sorted. */
function stronglyConnected(graph: Map<string, Map<string, unknown>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      out.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

/** A shortest path from start to end inside one strongly connected component: [start, …, end]. */
function shortestPath(
  graph: Map<string, Map<string, unknown>>,
  within: Set<string>,
  start: string,
  end: string,
): string[] {
  const prev = new Map<string, string>([[start, start]]);
  const queue = [start];
  while (queue.length > 0 && !prev.has(end)) {
    const v = queue.shift()!;
    for (const w of [...(graph.get(v)?.keys() ?? [])].sort()) {
      if (within.has(w) && !prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  const path = [end];
  while (path[0] !== start) path.unshift(prev.get(path[0])!);
  return path;
}

/** Every violation of the import rules in the tree at root, sorted by message. */
export function checkImports(root: string, rules: Rules = { floors: SRC_FLOORS, bans: TOP_LEVEL_BANS }): Violation[] {
  const { files, edges } = importGraph(root);
  const unresolved: Violation[] = edges
    .filter((e) => e.to === null)
    .map((e) => ({
      rule: 'unresolved',
      message: `unresolved: ${where(e)} imports '${e.specifier}', which names no file.`,
    }));
  return [
    ...unresolved,
    ...floorRules(files, edges, rules.floors),
    ...banRules(edges, rules.bans),
    ...cycleRules(edges),
  ].sort((a, b) => a.message.localeCompare(b.message, 'en', { numeric: true }));
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = process.argv[2] ?? process.cwd();
  const found = checkImports(root);
  for (const v of found) console.error(v.message);
  if (found.length > 0) {
    console.error(`\n${found.length} import rule violation(s); the rules and src/'s floors are in ${TABLE}.`);
    process.exit(1);
  }
  console.log('Imports follow the layout.');
}
