// Streams one NDJSON source file, validates each record with valibot and reports problems as file:line.
import { isUtf8 } from 'node:buffer';
import type { Hash } from 'node:crypto';
import { open } from 'node:fs/promises';
import * as v from 'valibot';

export interface Problem {
  file: string;
  line: number;
  field: string;
  reason: string;
}

/** The problem reason for a line that is not UTF-8 (decoding put U+FFFD where its bytes were). */
export const NOT_UTF8 = 'not valid UTF-8 (a Latin-1 or Windows-1252 export?); save the file as UTF-8';
/** The reason for JSON that fails to parse; a byte-order mark at the start of a file gets its own words. */
export function malformed(text: string, line: number, e: unknown): string {
  if (line === 1 && text.charCodeAt(0) === 0xfeff)
    return 'the file starts with a UTF-8 byte-order mark (BOM); save it as UTF-8 without one';
  return `malformed JSON: ${(e as Error).message}`;
}

/**
 * UTF-8 validity of a byte stream, chunk by chunk. Decoders replace invalid bytes with U+FFFD without a
 * word; this says whether a chunk's complete lines were valid, so that the lines where a U+FFFD appeared
 * can be reported instead. A newline byte never occurs inside a UTF-8 sequence. The unfinished line is
 * checked as it arrives, holding back only a character cut at a chunk's end (at most 3 bytes): memory
 * stays bounded however long a line is.
 */
export class Utf8Check {
  /** The unfinished line so far is valid. */
  private ok = true;
  /** The start of a character cut at the end of the last chunk. */
  private tail = Buffer.alloc(0);
  /** Whether the lines completed by this chunk were valid UTF-8. */
  push(data: Buffer): boolean {
    const first = data.indexOf(0x0a);
    if (first === -1) {
      this.absorb(data);
      return true;
    }
    this.absorb(data.subarray(0, first + 1));
    let ok = this.ok;
    const last = data.lastIndexOf(0x0a);
    if (last > first) ok = isUtf8(data.subarray(first + 1, last + 1)) && ok;
    this.ok = true;
    this.absorb(data.subarray(last + 1));
    return ok;
  }
  /** Whether the last (unterminated) line was valid. */
  end(): boolean {
    const ok = this.ok && this.tail.length === 0; // a character cut off by the end of the file is not valid
    this.ok = true;
    this.tail = Buffer.alloc(0);
    return ok;
  }
  /** Checks the next bytes of the unfinished line, keeping back a character they cut off. */
  private absorb(bytes: Buffer): void {
    const all = this.tail.length ? Buffer.concat([this.tail, bytes]) : bytes;
    const cut = incompleteTail(all);
    if (this.ok && !isUtf8(all.subarray(0, all.length - cut))) this.ok = false;
    this.tail = Buffer.from(all.subarray(all.length - cut)); // a copy: the caller reuses its buffer
  }
}

/** How many bytes at the end of `b` are the start of a multi-byte character that goes on past it (0-3). */
function incompleteTail(b: Buffer): number {
  for (let back = 1; back <= Math.min(3, b.length); back++) {
    const c = b[b.length - back];
    if ((c & 0xc0) === 0x80) continue; // a continuation byte: look further back for the lead byte
    const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0; // no lead byte within 3 bytes: nothing to hold back (isUtf8 judges the bytes as they are)
}

/**
 * The longest source line read, in characters: one line is one record, and the largest the format
 * allows (100,000-character texts in five locales) is about 1 MB. A longer line (a whole JSON array
 * exported on one line) is reported and skipped instead of held in memory whole.
 */
export const MAX_LINE = 4 * 1024 * 1024;
export const OVERLONG = Symbol('a line over MAX_LINE');
export const OVERLONG_REASON = `line longer than ${MAX_LINE.toLocaleString('en')} characters; one record per line is expected (a whole JSON array on one line?)`;

/**
 * Splits decoded text into lines at "\n" (a "\r" before it is JSON whitespace), chunk by chunk. A line
 * over `max` characters is yielded once as OVERLONG and the rest of it dropped as it arrives.
 */
export class LineSplitter {
  private carry = '';
  private skipping = false;
  constructor(private readonly max = MAX_LINE) {}
  /** The lines that `text` (the next decoded chunk) completes. */
  *push(text: string): Generator<string | typeof OVERLONG> {
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      if (this.skipping)
        this.skipping = false; // the end of a line already reported
      else if (this.carry.length + (nl - start) > this.max) yield OVERLONG;
      else yield this.carry.length ? this.carry + text.slice(start, nl) : text.slice(start, nl);
      this.carry = '';
      start = nl + 1;
    }
    if (this.skipping) return;
    if (this.carry.length + (text.length - start) > this.max) {
      this.carry = '';
      this.skipping = true;
      yield OVERLONG;
    } else if (start < text.length) this.carry += text.slice(start);
  }
  /** The last line, when the input does not end with a newline. */
  *end(): Generator<string> {
    if (this.carry.length) yield this.carry;
    this.carry = '';
    this.skipping = false;
  }
}

/**
 * Raw chunks of a source file in, lines out: every byte goes into `hash`, is decoded (a character cut at a
 * chunk's end is carried over) and split, and each line comes with whether its chunk's completed lines
 * were valid UTF-8. Used by fileLines (the main thread's reads) and the listings parser thread (its own).
 */
export class ChunkLines {
  // ignoreBOM: a byte-order mark stays in the text, so that the first line can be reported for it.
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  private readonly check = new Utf8Check();
  private readonly lines = new LineSplitter();
  constructor(private readonly hash: Hash) {}
  /** The lines the next chunk completes. */
  *push(data: Buffer): Generator<{ text: string | typeof OVERLONG; utf8: boolean }> {
    this.hash.update(data);
    const utf8 = this.check.push(data);
    for (const text of this.lines.push(this.decoder.decode(data, { stream: true }))) yield { text, utf8 };
  }
  /** The rest, at the end of the file. */
  *end(): Generator<{ text: string | typeof OVERLONG; utf8: boolean }> {
    const tail = this.decoder.decode();
    const utf8 = this.check.end();
    for (const text of this.lines.push(tail)) yield { text, utf8 };
    for (const text of this.lines.end()) yield { text, utf8 };
  }
}

/**
 * The lines of a file, read in 1 MiB chunks without blocking the thread (a source that blocks, such as a
 * FIFO or a hung network file system, leaves the process able to handle a signal).
 */
export async function* fileLines(
  path: string,
  hash: Hash,
): AsyncGenerator<{ text: string | typeof OVERLONG; utf8: boolean }> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    const chunks = new ChunkLines(hash);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      yield* chunks.push(buf.subarray(0, bytesRead));
    }
    yield* chunks.end();
  } finally {
    await fh.close();
  }
}

/** Collects problems up to a cap (the rest are only counted) and warnings by kind. */
export class Report {
  readonly problems: Problem[] = [];
  problemCount = 0;
  readonly warnings = new Map<string, number>();
  constructor(readonly cap = 50) {}
  problem(p: Problem) {
    this.problemCount++;
    if (this.problems.length < this.cap) this.problems.push(p);
  }
  warn(kind: string, n = 1) {
    this.warnings.set(kind, (this.warnings.get(kind) ?? 0) + n);
  }
  get failed() {
    return this.problemCount > 0;
  }
  format(): string[] {
    const lines = this.problems.map((p) => `${p.file}:${p.line}: ${p.field}: ${p.reason}`);
    if (this.problemCount > this.problems.length)
      lines.push(`… and ${this.problemCount - this.problems.length} more problems`);
    return lines;
  }
}

function issueField(issue: v.BaseIssue<unknown>): string {
  const keys = (issue.path ?? []).map((p) => String(p.key));
  return keys.length ? keys.join('.') : '(record)';
}

/** Turns a valibot issue into a reason a data editor can act on. */
function issueReason(issue: v.BaseIssue<unknown>, parentIsLocaleMap: boolean): string {
  if (issue.kind === 'schema' && issue.input === undefined) return 'required field is missing';
  if (issue.type === 'strict_object' && issue.expected === 'never') {
    return parentIsLocaleMap ? 'unknown locale key (allowed: en, nl, de, fr, es)' : 'unknown field';
  }
  const got = issue.received ? ` (got ${issue.received})` : '';
  if (issue.kind === 'schema') return `expected ${issue.expected}${got}`;
  // Validation messages come from the schema (for example "must not be negative").
  return issue.message.startsWith('Invalid') ? `${issue.message}` : issue.message;
}

function looksLikeLocaleMap(issue: v.BaseIssue<unknown>): boolean {
  const parent = issue.path && issue.path.length >= 1 ? issue.path[issue.path.length - 1].input : undefined;
  return !!parent && typeof parent === 'object' && !Array.isArray(parent) && 'en' in (parent as object);
}

export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): { field: string; reason: string }[] {
  return issues.map((issue) => ({ field: issueField(issue), reason: issueReason(issue, looksLikeLocaleMap(issue)) }));
}

/**
 * Calls `onRecord` for every valid record of `path`, in file order. Invalid lines are reported and
 * skipped (the build fails at the end, so one run shows many problems). Blank lines are ignored.
 * The raw file content is fed into `hash` so the snapshot id follows the source content.
 */
export async function readSource<S extends v.GenericSchema>(
  path: string,
  displayName: string,
  schema: S,
  report: Report,
  hash: Hash,
  onRecord: (rec: v.InferOutput<S>, line: number) => void,
  onProgress?: (lines: number) => void,
  /** Called with the id of a record that failed validation, so references to it do not cascade into more errors. */
  onInvalidId?: (id: string) => void,
): Promise<number> {
  let line = 0;
  let records = 0;
  for await (const { text, utf8 } of fileLines(path, hash)) {
    line++;
    if (onProgress && line % 100_000 === 0) onProgress(line);
    if (text === OVERLONG) {
      report.problem({ file: displayName, line, field: '(record)', reason: OVERLONG_REASON });
      continue;
    }
    if (text.trim() === '') continue;
    // A line that cannot be read still names its id, as a rule: references to it are then not reported
    // again as unknown (one broken owner line gave 23 follow-on "unknown owner" lines).
    const unreadable = (reason: string) => {
      report.problem({ file: displayName, line, field: '(record)', reason });
      const id = /"id"\s*:\s*"([^"\\]{1,120})"/.exec(text)?.[1];
      if (id !== undefined) onInvalidId?.(id);
    };
    if (!utf8 && text.includes('\ufffd')) {
      unreadable(NOT_UTF8);
      continue;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (e) {
      unreadable(malformed(text, line, e));
      continue;
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      report.problem({ file: displayName, line, field: '(record)', reason: 'expected a JSON object' });
      continue;
    }
    const result = v.safeParse(schema, raw);
    if (!result.success) {
      for (const d of describeIssues(result.issues)) report.problem({ file: displayName, line, ...d });
      const id = (raw as { id?: unknown }).id;
      if (typeof id === 'string') onInvalidId?.(id);
      continue;
    }
    records++;
    onRecord(result.output, line);
  }
  return records;
}
