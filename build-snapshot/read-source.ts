// Streams one NDJSON source file, validates each record with valibot and reports problems as file:line.
import { isUtf8 } from 'node:buffer';
import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Hash } from 'node:crypto';
import * as v from 'valibot';

export interface Problem { file: string; line: number; field: string; reason: string }

/** The problem reason for a line that is not UTF-8 (decoding put U+FFFD where its bytes were). */
export const NOT_UTF8 = 'not valid UTF-8 (a Latin-1 or Windows-1252 export?); save the file as UTF-8';
/** The reason for JSON that fails to parse; a byte-order mark at the start of a file gets its own words. */
export function malformed(text: string, line: number, e: unknown): string {
  if (line === 1 && text.charCodeAt(0) === 0xfeff) return 'the file starts with a UTF-8 byte-order mark (BOM); save it as UTF-8 without one';
  return `malformed JSON: ${(e as Error).message}`;
}

/**
 * UTF-8 validity of a byte stream, chunk by chunk. Decoders replace invalid bytes with U+FFFD without a
 * word; this says whether a chunk's complete lines were valid, so that the lines where a U+FFFD appeared
 * can be reported instead. A newline byte never occurs inside a UTF-8 sequence, so a sequence cut at a
 * chunk's end is joined with the next chunk's first line before it is checked.
 */
export class Utf8Check {
  private pending = Buffer.alloc(0);
  /** Whether the lines completed by this chunk were valid UTF-8. */
  push(data: Buffer): boolean {
    const first = data.indexOf(0x0a);
    if (first === -1) { this.pending = Buffer.concat([this.pending, data]); return true; }
    const last = data.lastIndexOf(0x0a);
    let ok = isUtf8(this.pending.length ? Buffer.concat([this.pending, data.subarray(0, first + 1)]) : data.subarray(0, first + 1));
    if (ok && last > first) ok = isUtf8(data.subarray(first + 1, last + 1));
    this.pending = Buffer.from(data.subarray(last + 1)); // a copy: the caller reuses its buffer
    return ok;
  }
  /** Whether the last (unterminated) line was valid. */
  end(): boolean { const ok = isUtf8(this.pending); this.pending = Buffer.alloc(0); return ok; }
}

/** Whether a whole (small) file is valid UTF-8, read in 1 MiB chunks. */
export function fileIsUtf8(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const check = new Utf8Check();
    const buf = Buffer.allocUnsafe(1 << 20);
    let ok = true;
    for (let n = readSync(fd, buf, 0, buf.length, null); n > 0; n = readSync(fd, buf, 0, buf.length, null)) ok = check.push(buf.subarray(0, n)) && ok;
    return check.end() && ok;
  } finally {
    closeSync(fd);
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
  warn(kind: string, n = 1) { this.warnings.set(kind, (this.warnings.get(kind) ?? 0) + n); }
  get failed() { return this.problemCount > 0; }
  format(): string[] {
    const lines = this.problems.map((p) => `${p.file}:${p.line}: ${p.field}: ${p.reason}`);
    if (this.problemCount > this.problems.length) lines.push(`… and ${this.problemCount - this.problems.length} more problems`);
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
  // Small files: one pass to learn whether any bytes are not UTF-8; if so, lines with U+FFFD are reported.
  const utf8 = fileIsUtf8(path);
  const input = createReadStream(path, { encoding: 'utf8' });
  input.on('data', (chunk) => hash.update(chunk)); // the raw content, chunk by chunk
  const rl = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  let records = 0;
  for await (const text of rl) {
    line++;
    if (onProgress && line % 100_000 === 0) onProgress(line);
    if (text.trim() === '') continue;
    // A line that cannot be read still names its id, as a rule: references to it are then not reported
    // again as unknown (one broken owner line gave 23 follow-on "unknown owner" lines).
    const unreadable = (reason: string) => {
      report.problem({ file: displayName, line, field: '(record)', reason });
      const id = /"id"\s*:\s*"([^"\\]{1,120})"/.exec(text)?.[1];
      if (id !== undefined) onInvalidId?.(id);
    };
    if (!utf8 && text.includes('\ufffd')) { unreadable(NOT_UTF8); continue; }
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
