// The two generated files of the client, from a served OpenAPI document: client/openapi.json (the document as
// served, indented) and client/src/schema.d.ts (openapi-typescript's output). Shared by the regenerating script
// and the test that fails when the committed files differ from what the server serves.
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLIENT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DOCUMENT_FILE = join(CLIENT_DIR, 'openapi.json');
export const TYPES_FILE = join(CLIENT_DIR, 'src/schema.d.ts');
/** The command that regenerates both files (root package.json). */
export const REGENERATE = 'npm run client:types';
const CLI = join(CLIENT_DIR, 'node_modules/openapi-typescript/bin/cli.js');
const INSTALL = 'npm ci --prefix client';

/** The served document as committed: the same JSON, two-space indented, one trailing newline. */
export function documentText(doc: unknown): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** Fetches the public document from a running service (no key needed). */
export async function fetchDocument(baseUrl: string): Promise<unknown> {
  const res = await fetch(new URL('/v1/openapi.json', baseUrl));
  if (!res.ok) throw new Error(`GET /v1/openapi.json answered ${res.status}`);
  return res.json();
}

/**
 * openapi-typescript's output for a document, with its default options. It runs from client/node_modules (it needs
 * TypeScript 5's compiler API, which the root's TypeScript does not ship) with client/ as its working folder, so a
 * redocly configuration elsewhere in the tree cannot change the output.
 */
export function typesFor(doc: unknown): string {
  if (!existsSync(CLI))
    throw new Error(`openapi-typescript is not installed in client/node_modules: run \`${INSTALL}\` (or \`npm ci\`)`);
  const input = join(tmpdir(), `nlr-openapi-${process.pid}-${Date.now()}.json`);
  writeFileSync(input, documentText(doc));
  const r = spawnSync(process.execPath, [CLI, input], {
    cwd: CLIENT_DIR,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  if (r.status !== 0) throw new Error(`openapi-typescript failed (${r.status ?? r.signal}): ${r.stderr || r.error}`);
  return r.stdout;
}
