// parseArgs for the command-line tools (build-snapshot, keys), refusing a repeated option.
import { type ParseArgsConfig, parseArgs } from 'node:util';

/**
 * node's parseArgs with tokens, throwing for an option given twice: parseArgs keeps the last of a
 * repeated option silently, so "keys create --name a --name b" named the key b and
 * "build-snapshot --out a --out b" wrote b.
 */
export function parseCliArgs<T extends ParseArgsConfig>(config: T) {
  const parsed = parseArgs({ ...config, tokens: true });
  const seen = new Set<string>();
  for (const t of parsed.tokens ?? []) {
    // always present: tokens is on
    if (t.kind !== 'option') continue;
    if (seen.has(t.name)) throw new Error(`--${t.name} is given more than once`);
    seen.add(t.name);
  }
  return parsed;
}
