// The single executable's main script (bundled by scripts/sea.ts as CommonJS, as Node 20's SEA needs): one
// subcommand per operator command, each the same module its npm script runs, with the same options, output and
// exit codes. Each entry point reads process.argv after the command, so the command word is removed before it
// loads; messages that name a command name this executable's (snapshot-format/commands.ts).

declare const SEA_VERSION: string; // set by the build

const USAGE = `Usage: nl-rental-api [command] [arguments]

  serve (the default)              run the API server; settings come from the environment (HOST, PORT,
                                   SNAPSHOT_PATH, KEYS_PATH, CURSOR_SECRET, TRUST_PROXY, WORKERS, …)
  build-snapshot --source DIR --out FILE
                                   compile a snapshot from source NDJSON files (npm run build-snapshot)
  snapshot inspect FILE | diff OLD NEW
                                   check a snapshot, or compare two, before shipping (npm run snapshot)
  keys <command> …                 manage API keys in KEYS_PATH (or Redis): create --name NAME | list |
                                   disable ID | enable ID | revoke ID (npm run keys)
  version                          print the version
  help                             this text; \`nl-rental-api COMMAND --help\` for a command's own

Exit status: 0 done, 1 failed, 2 bad arguments.
`;

/** The entry point of each command that takes the rest of the command line. */
const COMMANDS: Record<string, () => unknown> = {
  serve: () => require('../src/main.ts'),
  'build-snapshot': () => require('../build-snapshot/main.ts'),
  snapshot: () => require('../src/cli/snapshot.ts'),
  keys: () => require('../src/cli/keys.ts'),
};

// node:cluster starts a worker (WORKERS > 1) as `<executable> <executable>`: a worker always serves.
const command = require('node:cluster').isWorker ? 'serve' : process.argv[2];
if (command === undefined) COMMANDS.serve();
else if (Object.hasOwn(COMMANDS, command)) {
  process.argv.splice(2, 1);
  COMMANDS[command]();
} else if (command === 'version' || command === '--version') {
  process.stdout.write(`nl-rental-api ${SEA_VERSION} (node ${process.version})\n`);
} else if (command === 'help' || command === '--help' || command === '-h') {
  process.stdout.write(USAGE);
} else {
  process.stderr.write(`nl-rental-api: unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
  process.exitCode = 2;
}
