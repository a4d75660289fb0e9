// npm test's reporter: node's own (spec on a terminal, TAP otherwise) with the skipped suites counted and named
// before the closing summary. Node counts a suite skipped as a whole (a Debian part missing) as no skipped test,
// so "skipped 0" could hide a whole file's tests; each line names the suite and what it needs installed.
// Plain JavaScript: node loads a reporter before a loader such as tsx is registered.
import { spec, tap } from 'node:test/reporters';

/** The events, with the skipped-suite lines added as diagnostics just before the summary's "tests N". */
async function* withSkippedSuites(source) {
  const skipped = [];
  let told = false;
  for await (const event of source) {
    const { type, data } = event;
    if ((type === 'test:pass' || type === 'test:fail') && data.skip !== undefined && data.details?.type === 'suite')
      skipped.push(`skipped suite: ${data.name}${typeof data.skip === 'string' ? ` (${data.skip})` : ''}`);
    if (!told && type === 'test:diagnostic' && data.nesting === 0 && /^tests \d+$/.test(data.message)) {
      told = true;
      for (const message of [`skipped suites ${skipped.length}`, ...skipped])
        yield { type: 'test:diagnostic', data: { nesting: 0, message } };
    }
    yield event;
  }
}

export default async function* reporter(source) {
  const events = withSkippedSuites(source);
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
