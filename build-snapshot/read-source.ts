// Streams one NDJSON source file, validates each record with valibot and reports problems as file:line.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Hash } from 'node:crypto';
import * as v from 'valibot';

export interface Problem { file: string; line: number; field: string; reason: string }

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
  const input = createReadStream(path, { encoding: 'utf8' });
  input.on('data', (chunk) => hash.update(chunk)); // the raw content, chunk by chunk
  const rl = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  let records = 0;
  for await (const text of rl) {
    line++;
    if (onProgress && line % 100_000 === 0) onProgress(line);
    if (text.trim() === '') continue;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (e) {
      report.problem({ file: displayName, line, field: '(record)', reason: `malformed JSON: ${(e as Error).message}` });
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
