import { buildTestSnapshot, startServer } from '/work/main/test/helpers.ts';
const { path } = await buildTestSnapshot();
const s = await startServer({ SNAPSHOT_PATH: path });
const paths = process.argv.slice(2);
for (const p of paths) {
  const r = await s.get(p);
  console.log('###', p, r.status, r.headers.get('content-type'), r.headers.get('allow'));
  console.log(JSON.stringify(r.body, null, 1)?.slice(0, 3000));
}
await s.close();
