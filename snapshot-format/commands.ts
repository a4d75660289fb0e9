// The operator's commands as the user runs them, for every message that names one: `npm run keys -- …` from the
// repository, `nl-rental-api keys …` from the single executable (which holds this module too).
import { isSea } from 'node:sea';

/** The name of the single executable (scripts/sea.ts writes dist/nl-rental-api). */
export const EXECUTABLE = 'nl-rental-api';

export type Command = 'keys' | 'snapshot' | 'build-snapshot';

/**
 * `command` with `args` as the user types it here. From the repository it is the npm script (`quiet` adds npm's
 * -s, for a command whose stdout is the answer); from the single executable, its subcommand.
 */
export function commandLine(command: Command, args = '', opts: { quiet?: boolean; sea?: boolean } = {}): string {
  if (opts.sea ?? isSea()) return [EXECUTABLE, command, args].filter(Boolean).join(' ');
  return [`npm run${opts.quiet ? ' -s' : ''} ${command}`, args && `-- ${args}`].filter(Boolean).join(' ');
}
