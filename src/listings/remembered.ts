// A small per-snapshot memo: values read once from the snapshot (which never changes), bounded in entries.

/**
 * The number kept in `map` under `key`, read once: the snapshot never changes. A client can ask for any value
 * (unknown ones are kept too), so the map is emptied when it grows past 16k entries.
 */
export function rememberedIn(map: Map<string, number>, key: string, read: () => number): number {
  let n = map.get(key);
  if (n === undefined) {
    n = read();
    if (map.size >= 16_384) map.clear();
    map.set(key, n);
  }
  return n;
}
