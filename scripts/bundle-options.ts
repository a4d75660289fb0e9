// esbuild options shared by `npm run bundle` and the benchmark (which serves its load from a bundle too).
import type { BuildOptions } from 'esbuild';

export const BUNDLE_OPTIONS: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['better-sqlite3'],
  sourcemap: true,
  // Bundled ESM still needs require() for the few CommonJS dependencies.
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
};
