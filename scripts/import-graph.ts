// The repository's import graph: every TypeScript/JavaScript file's relative imports, resolved to files.
// A small tokenizer, not a TypeScript parser: TypeScript 7 has no JavaScript compiler API for a tool to parse with,
// and all the graph needs is each import's specifier, with comments, strings, templates and regexes skipped.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';

export type ImportKind = 'static' | 'dynamic' | 'require';

/** One import in a file: its specifier as written, its line, and how it is written. */
export interface ImportRef {
  specifier: string;
  line: number;
  kind: ImportKind;
}

type Token = { t: 'id' | 'str' | 'tpl' | 'num' | 'p'; v: string; at: number };

/** Keywords after which a `/` starts a regular expression, not a division. */
const BEFORE_REGEX = new Set([
  'return',
  'typeof',
  'instanceof',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'case',
  'do',
  'else',
  'yield',
  'await',
]);
const ID_START = /[A-Za-z_$#\u0080-\uffff]/;
const ID_PART = /[\w$\u0080-\uffff]/;

/** The source's tokens, without whitespace and comments; a string's and a plain template's value is its text. */
function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  const braces: ('{' | '${')[] = []; // open `{` and template substitutions, innermost last
  let i = 0;
  const n = src.length;

  /** Reads a template's text from i (just past a backtick or a substitution's `}`); at a `${`, leaves the rest to the tokenizer. */
  const template = (start: number): void => {
    let text = '';
    while (i < n) {
      const c = src[i];
      if (c === '\\') {
        text += src[i + 1];
        i += 2;
      } else if (c === '`') {
        i++;
        tokens.push({ t: 'tpl', v: text, at: start });
        return;
      } else if (c === '$' && src[i + 1] === '{') {
        i += 2;
        braces.push('${');
        tokens.push({ t: 'tpl', v: '', at: start }); // a template with substitutions: no specifier
        return;
      } else {
        text += c;
        i++;
      }
    }
  };

  while (i < n) {
    const c = src[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') i++;
    else if (c === '/' && src[i + 1] === '/') i = src.indexOf('\n', i) === -1 ? n : src.indexOf('\n', i);
    else if (c === '/' && src[i + 1] === '*') i = src.indexOf('*/', i + 2) === -1 ? n : src.indexOf('*/', i + 2) + 2;
    else if (c === "'" || c === '"') {
      const start = i++;
      let text = '';
      while (i < n && src[i] !== c && src[i] !== '\n') {
        if (src[i] === '\\') i++;
        text += src[i++];
      }
      i++;
      tokens.push({ t: 'str', v: text, at: start });
    } else if (c === '`') {
      const start = i++;
      template(start);
    } else if (c === '/') {
      const prev = tokens[tokens.length - 1];
      const regex =
        !prev ||
        (prev.t === 'p' && prev.v !== ')' && prev.v !== ']') ||
        (prev.t === 'id' && BEFORE_REGEX.has(prev.v) && tokens[tokens.length - 2]?.v !== '.');
      if (!regex) {
        tokens.push({ t: 'p', v: c, at: i++ });
        continue;
      }
      const start = i++;
      let inClass = false;
      while (i < n && src[i] !== '\n') {
        if (src[i] === '\\') i++;
        else if (src[i] === '[') inClass = true;
        else if (src[i] === ']') inClass = false;
        else if (src[i] === '/' && !inClass) break;
        i++;
      }
      i++;
      while (i < n && ID_PART.test(src[i])) i++; // flags
      tokens.push({ t: 'num', v: 'regex', at: start }); // a value, like a number, for what follows
    } else if (ID_START.test(c)) {
      const start = i++;
      while (i < n && ID_PART.test(src[i])) i++;
      tokens.push({ t: 'id', v: src.slice(start, i), at: start });
    } else if (c >= '0' && c <= '9') {
      const start = i++;
      while (i < n && (ID_PART.test(src[i]) || src[i] === '.')) i++;
      tokens.push({ t: 'num', v: src.slice(start, i), at: start });
    } else if (c === '{') {
      braces.push('{');
      tokens.push({ t: 'p', v: c, at: i++ });
    } else if (c === '}' && braces[braces.length - 1] === '${') {
      braces.pop();
      const start = i++;
      template(start);
    } else {
      if (c === '}') braces.pop();
      tokens.push({ t: 'p', v: c, at: i++ });
    }
  }
  return tokens;
}

/**
 * The imports a file's source makes: `import … from '…'`, `import '…'`, `import type …`, `export … from '…'`,
 * `import('…')` (also in a type) and `require('…')`, each with a literal specifier.
 */
export function findImports(src: string): ImportRef[] {
  const tokens = tokenize(src);
  const found: { specifier: string; at: number; kind: ImportKind }[] = [];
  const is = (k: number, t: Token['t'], v?: string) => tokens[k]?.t === t && (v === undefined || tokens[k].v === v);
  /** From k, past an import or export clause (names, `*`, `as`, `type`, `{ … }`), to `from '…'`: its index. */
  const fromClause = (k: number): number => {
    while (k < tokens.length) {
      if (is(k, 'id', 'from') && is(k + 1, 'str')) return k + 1;
      if (is(k, 'p', '{')) {
        while (k < tokens.length && !is(k, 'p', '}')) k++;
        k++;
      } else if (is(k, 'id') || is(k, 'p', '*') || is(k, 'p', ',')) k++;
      else return -1;
    }
    return -1;
  };
  for (let k = 0; k < tokens.length; k++) {
    const tok = tokens[k];
    if (tok.t !== 'id' || is(k - 1, 'p', '.')) continue;
    if (tok.v === 'import') {
      if (is(k + 1, 'p', '(') && is(k + 2, 'str'))
        found.push({ specifier: tokens[k + 2].v, at: tok.at, kind: 'dynamic' });
      else if (is(k + 1, 'p', '(') && is(k + 2, 'tpl') && tokens[k + 2].v)
        found.push({ specifier: tokens[k + 2].v, at: tok.at, kind: 'dynamic' });
      else if (is(k + 1, 'str')) found.push({ specifier: tokens[k + 1].v, at: tok.at, kind: 'static' });
      else if (!is(k + 1, 'p', '.')) {
        const s = fromClause(k + 1);
        if (s !== -1) found.push({ specifier: tokens[s].v, at: tok.at, kind: 'static' });
      }
    } else if (tok.v === 'export' && (is(k + 1, 'p', '*') || is(k + 1, 'p', '{') || is(k + 1, 'id', 'type'))) {
      const s = fromClause(k + 1);
      if (s !== -1) found.push({ specifier: tokens[s].v, at: tok.at, kind: 'static' });
    } else if (tok.v === 'require' && is(k + 1, 'p', '(') && is(k + 2, 'str') && is(k + 3, 'p', ')')) {
      found.push({ specifier: tokens[k + 2].v, at: tok.at, kind: 'require' });
    }
  }
  const lineStarts = [0];
  for (let i = src.indexOf('\n'); i !== -1; i = src.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const lineOf = (at: number) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= at) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  return found.map((f) => ({ specifier: f.specifier, line: lineOf(f.at), kind: f.kind }));
}

/** One relative import between two files of the tree; `to` is null when no file answers the specifier. */
export interface Edge {
  from: string;
  to: string | null;
  specifier: string;
  line: number;
  kind: ImportKind;
}

const CODE = /\.(ts|mts|cts|tsx|js|mjs|cjs|jsx)$/;
/** Top-level folders never read: build output and data. node_modules and dot-folders (caches) are skipped anywhere. */
const SKIP_TOP = new Set(['dist', 'data']);

/** The code files under root, as posix paths relative to it, sorted. */
export function codeFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      if (dir === root && SKIP_TOP.has(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && CODE.test(entry.name)) out.push(relative(root, path).split(sep).join('/'));
    }
  };
  walk(root);
  return out.sort();
}

const isFile = (path: string) => existsSync(path) && statSync(path).isFile();

/** The file a relative specifier names: as written, `.js` written for `.ts`, or with `.ts` or `/index.ts` added. */
function resolveFile(root: string, from: string, specifier: string): string | null {
  const base = posix.join(posix.dirname(from), specifier);
  const candidates = [base, base.replace(/\.(m|c)?js$/, '.$1ts'), `${base}.ts`, `${base}/index.ts`];
  const hit = candidates.find((c) => isFile(join(root, c)));
  return hit === undefined ? null : posix.normalize(hit);
}

/** Every relative import of every code file under root (package imports are not the layout's business). */
export function importGraph(root: string): { files: string[]; edges: Edge[] } {
  const files = codeFiles(root);
  const edges: Edge[] = [];
  for (const from of files) {
    for (const ref of findImports(readFileSync(join(root, from), 'utf8'))) {
      if (!/^\.\.?(\/|$)/.test(ref.specifier)) continue;
      edges.push({ from, to: resolveFile(root, from, ref.specifier), ...ref });
    }
  }
  return { files, edges };
}
