// The locations as later files see them while loading: their tree (checked once the file is read), their depth,
// and the names a listing is found by through its location and the location's ancestors.

/** A location line as the listings and the tree check need it. */
export type LocInfo = { type: string; parent: string | null; line: number };

export function depthOf(type: string) {
  return type === 'province' ? 0 : type === 'city' ? 1 : 2;
}

const PARENT_TYPE: Record<string, string | null> = { province: null, city: 'province', neighbourhood: 'city' };

/** A province has no parent, a city's parent is a province, a neighbourhood's parent is a city. */
export function checkLocationTree(
  all: Map<string, LocInfo>,
  ids: Set<string>,
  problem: (line: number, field: string, reason: string) => void,
) {
  for (const [id, loc] of all) {
    const want = PARENT_TYPE[loc.type];
    if (want === null) {
      if (loc.parent !== null) problem(loc.line, 'parent_id', `a province has no parent (got "${loc.parent}")`);
      continue;
    }
    if (loc.parent === null) {
      problem(loc.line, 'parent_id', `a ${loc.type} needs a parent ${want}`);
      continue;
    }
    const parent = all.get(loc.parent);
    if (!parent) {
      if (!ids.has(loc.parent)) problem(loc.line, 'parent_id', `unknown location "${loc.parent}"`);
    } else if (parent.type !== want)
      problem(
        loc.line,
        'parent_id',
        `the parent of ${loc.type} "${id}" must be a ${want}, "${loc.parent}" is a ${parent.type}`,
      );
  }
}

/** Every name (all locales) of each location and its ancestors: listings are found by q through them. */
export function locationText(held: Record<string, unknown>[]): [string, string][] {
  const byId = new Map(held.map((l) => [l.id as string, l]));
  const out: [string, string][] = [];
  for (const l of held) {
    const names: string[] = [];
    for (let cur: Record<string, unknown> | undefined = l; cur; cur = byId.get(cur.parent_id as string)) {
      names.push(...Object.values(cur.name as Record<string, string>));
    }
    out.push([l.id as string, names.join(' ')]);
  }
  return out;
}
