// parseArgs for the command-line tools (build-snapshot, keys, snapshot), refusing a repeated option.
import { type ParseArgsConfig, parseArgs } from 'node:util';

/**
 * node's parseArgs with tokens, throwing for an option given twice: parseArgs keeps the last of a
 * repeated option silently, so "keys create --name a --name b" named the key b and
 * "build-snapshot --out a --out b" wrote b. An unknown option is named alone: node's message goes on
 * about "place it at the end of the command after '--'", which under `npm run … --` is no help.
 */
export function parseCliArgs<T extends ParseArgsConfig>(config: T) {
  let parsed: ReturnType<typeof parseArgs<T & { tokens: true }>>;
  try {
    parsed = parseArgs({ ...config, tokens: true });
  } catch (e) {
    const unknown = /^Unknown option '([^']*)'/.exec((e as Error).message);
    if ((e as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown)
      throw new Error(`unknown option ${unknown[1]}`);
    throw e;
  }
  const seen = new Set<string>();
  for (const t of parsed.tokens ?? []) {
    // always present: tokens is on
    if (t.kind !== 'option') continue;
    if (seen.has(t.name)) throw new Error(`--${t.name} is given more than once`);
    seen.add(t.name);
  }
  return parsed;
}
