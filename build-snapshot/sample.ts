// npm start's first step: builds data/snapshot.db from the shipped sample data in data/ when it is missing or was
// made by another schema version (after a pull). A SNAPSHOT_PATH in the environment is the operator's file: untouched.
import { existsSync } from 'node:fs';
import { SCHEMA_VERSION, snapshotSchemaVersion } from '../snapshot-format/schema.ts';
import { buildSnapshot } from './compile.ts';

const SOURCE = 'data';
/** The server's default SNAPSHOT_PATH (src/config.ts). */
const OUT = 'data/snapshot.db';

const say = (msg: string) =>
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'info', msg })}\n`);

if (!process.env.SNAPSHOT_PATH) {
  const version = existsSync(OUT) ? snapshotSchemaVersion(OUT) : undefined;
  const state =
    version === undefined
      ? 'missing'
      : version === null
        ? 'unreadable'
        : version !== SCHEMA_VERSION
          ? 'outdated'
          : 'current';
  if (state === 'unreadable') {
    // The compiler replaces only a file it can read as a snapshot (a key store given by mistake must survive).
    process.stderr.write(
      `npm start: ${OUT} is not a snapshot this server can read (damaged, cut short, or another file); remove it (rm ${OUT}) and run npm start again to rebuild it from ${SOURCE}/\n`,
    );
    process.exit(1);
  }
  if (state !== 'current') {
    say(
      state === 'missing'
        ? `no snapshot at ${OUT}: building it from the sample data in ${SOURCE}/`
        : `the snapshot at ${OUT} is not of schema version ${SCHEMA_VERSION}: rebuilding it from the sample data in ${SOURCE}/`,
    );
    const r = await buildSnapshot({ source: SOURCE, out: OUT, log: () => {} });
    if (!r.ok) {
      process.stderr.write(`building the sample snapshot failed:\n${r.problems.join('\n')}\n`);
      process.exit(1);
    }
    say(`built ${OUT} (${r.snapshotId}) in ${r.seconds.toFixed(1)} s`);
  }
}
