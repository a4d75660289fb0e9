// `npm run client:types` (here, not in client/: the client never imports the server): starts the real service in-process on a loopback port (a snapshot of the shipped sample
// in a temporary folder, an empty key store: the document is public), fetches /v1/openapi.json and writes
// client/openapi.json and client/src/schema.d.ts from it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { buildSnapshot } from '../build-snapshot/compile.ts';
import {
  CLIENT_DIR,
  DOCUMENT_FILE,
  documentText,
  fetchDocument,
  TYPES_FILE,
  typesFor,
} from '../client/scripts/openapi-types.ts';
import { openKeyStore } from '../src/access/key-store.ts';
import { loadConfig } from '../src/config.ts';
import { startService } from '../src/service/server.ts';

const ROOT = join(CLIENT_DIR, '..');
const dir = mkdtempSync(join(tmpdir(), 'nlr-client-types-'));
try {
  const snapshot = join(dir, 'snapshot.db');
  const built = await buildSnapshot({ source: join(ROOT, 'data'), out: snapshot, log: () => {} });
  if (!built.ok) throw new Error(`building the sample snapshot failed:\n${built.problems.join('\n')}`);
  const keys = join(dir, 'keys.db');
  openKeyStore(keys, { create: true }).close();
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    SNAPSHOT_PATH: snapshot,
    KEYS_PATH: keys,
    CURSOR_SECRET: 'client-types-only-0123456789',
    LOG_REQUESTS: '0',
    DEV_KEY: '0',
  });
  const service = await startService(config, { log: () => {} });
  let doc: unknown;
  try {
    doc = await fetchDocument(service.url);
  } finally {
    await service.close();
  }
  writeFileSync(DOCUMENT_FILE, documentText(doc));
  writeFileSync(TYPES_FILE, typesFor(doc));
  for (const f of [DOCUMENT_FILE, TYPES_FILE]) console.log(`wrote ${relative(ROOT, f)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
