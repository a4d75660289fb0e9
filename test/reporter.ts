// npm test's reporter: node's own (spec on a terminal, TAP otherwise) with two additions just before the closing
// summary. Node counts a suite skipped as a whole (a Debian part missing) as no skipped test, so "skipped 0" could
// hide a whole file's tests: each such suite is counted and named with what it needs installed. And the ten files
// that took longest (wall time of the file's process) are listed, so the next slow test is seen. test/run.ts uses it.
import { relative } from 'node:path';
import { spec, type TestEvent, tap } from 'node:test/reporters';

const SLOWEST = 10;

/** The events, with the skipped-suite and slowest-file lines added as diagnostics just before "tests N". */
async function* withSummaryLines(source: AsyncIterable<TestEvent>): AsyncGenerator<TestEvent> {
  const skipped: string[] = [];
  const files: { file: string; ms: number }[] = [];
  let told = false;
  for await (const event of source) {
    const { type, data } = event;
    if ((type === 'test:pass' || type === 'test:fail') && data.skip !== undefined && data.details?.type === 'suite')
      skipped.push(`skipped suite: ${data.name}${typeof data.skip === 'string' ? ` (${data.skip})` : ''}`);
    // A file's own completion: node names the file's test after its path.
    if (type === 'test:complete' && data.nesting === 0 && data.file !== undefined && data.name === data.file)
      files.push({ file: relative(process.cwd(), data.file), ms: data.details?.duration_ms ?? 0 });
    if (!told && type === 'test:diagnostic' && data.nesting === 0 && /^tests \d+$/.test(data.message)) {
      told = true;
      const slowest = files.sort((a, b) => b.ms - a.ms).slice(0, SLOWEST);
      const lines = [
        `skipped suites ${skipped.length}`,
        ...skipped,
        `slowest files ${slowest.length}`,
        ...slowest.map(({ file, ms }) => `slow file: ${(ms / 1000).toFixed(1).padStart(6)} s ${file}`),
      ];
      for (const message of lines) yield { type: 'test:diagnostic', data: { nesting: 0, message } };
    }
    yield event;
  }
}

export default async function* reporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const events = withSummaryLines(source);
  if (!process.stdout.isTTY) {
    yield* tap(events);
    return;
  }
  const out = new spec();
  void (async () => {
    for await (const e of events) out.write(e);
    out.end();
  })();
  for await (const chunk of out) yield String(chunk);
}
