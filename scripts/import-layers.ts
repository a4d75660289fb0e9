// The import rules' one table, read by scripts/check-imports.ts: the floors of src/ and the top-level folders' bans.

/**
 * The floors of src/, top floor first. A module imports only from a strictly lower floor or from inside its own
 * folder; two different folders (or files) on the same floor never import each other, so floor 0's files import
 * nothing from src/. An entry is a folder directly under src/ (`'http/'`, everything beneath it included) or a
 * file directly under src/ (`'main.ts'`). A folder or file under src/ that no floor lists fails the check.
 */
export const SRC_FLOORS: Readonly<Record<number, readonly string[]>> = {
  7: ['main.ts', 'cli/'],
  6: ['service/'],
  5: ['openapi/'],
  4: ['routes/'], // one file per URL family; routes/support/ holds what they share and imports none of them
  3: ['http/', 'inspect/'],
  2: ['access/', 'snapshot/'],
  1: ['listings/', 'minisign/'],
  0: ['errors.ts', 'log.ts', 'config.ts', 'version.ts'],
};

/** A top-level folder's imports that the layout forbids, whatever the file: [importer, imported, why]. */
export const TOP_LEVEL_BANS: readonly (readonly [string, string, string])[] = [
  ['src/', 'build-snapshot/', 'The server never imports the compiler or the generator.'],
  ['src/', 'generate/', 'The server never imports the compiler or the generator.'],
  ['build-snapshot/', 'src/', 'The compiler never imports the server: they share only snapshot-format/.'],
  ['build-snapshot/', 'generate/', 'The compiler never imports the generator.'],
  ['snapshot-format/', 'src/', 'The format is the contract both sides import; it imports neither.'],
  ['snapshot-format/', 'build-snapshot/', 'The format is the contract both sides import; it imports neither.'],
  ['snapshot-format/', 'generate/', 'The format is the contract both sides import; it imports neither.'],
  ['generate/', 'src/', 'The generator writes source data; it never imports the server.'],
  ['client/', 'src/', 'The client is its own package: it never imports the server.'],
  ['*', 'test/', 'Nothing imports the tests.'],
  ['*', 'bench/', 'Nothing imports the benchmarks.'],
];
