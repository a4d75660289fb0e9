// The single executable's main script (bundled by scripts/sea.ts as CommonJS, as Node 20's SEA needs):
// `nl-rental-api [serve]` runs the server (src/main.ts), `nl-rental-api keys …` the key command
// (src/cli/keys.ts). Each entry point reads process.argv after the command, so the command word is removed
// before it loads. The snapshot compiler stays in the dist/ bundle: its worker threads load their own script
// file, which a single executable does not have.

declare const SEA_VERSION: string; // set by the build

const USAGE = `Usage: nl-rental-api [command]

  serve (the default)   run the API server; settings come from the environment (HOST, PORT, SNAPSHOT_PATH,
                        KEYS_PATH, CURSOR_SECRET, TRUST_PROXY, …)
  keys <command> …      manage API keys in KEYS_PATH: create --name NAME | list | disable ID | enable ID | revoke ID
  version               print the version

Snapshots are built with the bundle's compiler: node build-snapshot.mjs --source DIR --out FILE.
`;

// node:cluster starts a worker (WORKERS > 1) as `<executable> <executable>`: a worker always serves.
const command = require('node:cluster').isWorker ? 'serve' : process.argv[2];
switch (command) {
  case undefined:
  case 'serve':
    process.argv.splice(2, command ? 1 : 0);
    require('../src/main.ts');
    break;
  case 'keys':
    process.argv.splice(2, 1);
    require('../src/cli/keys.ts');
    break;
  case 'version':
  case '--version':
    process.stdout.write(`nl-rental-api ${SEA_VERSION} (node ${process.version})\n`);
    break;
  case 'help':
  case '--help':
  case '-h':
    process.stdout.write(USAGE);
    break;
  case 'build-snapshot':
    process.stderr.write(
      'nl-rental-api: the compiler is not in the single executable; run node build-snapshot.mjs from the bundle (npm run bundle)\n',
    );
    process.exitCode = 2;
    break;
  default:
    process.stderr.write(`nl-rental-api: unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
    process.exitCode = 2;
}
