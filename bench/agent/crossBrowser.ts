// The agent's optional fontMetrics signal (issue 36 item 2) in real browsers:
// whether one machine's browsers report it alike, what else was a candidate
// and which engines differ on it, and what it costs.
//
//   npx tsx bench/agent/crossBrowser.ts [--runs 15]
//
// Needs /usr/bin/chromium (driven by playwright-core) and, for the Firefox
// rows, /usr/bin/firefox-esr (run as a plain headless process on a fresh
// profile; its pages report back here and chain to the next run). The agent
// is built from this checkout: once as served, once without the fontMetrics
// collector (the "without" rows).
//
// Stability: the value in the same browser twice (fresh contexts, and page
// after page in Firefox), in two Chromium profiles (fresh user data dirs, the
// second with Edge's user agent), in Chromium and Firefox, and in Chromium
// emulating another device (device scale factor 2, another viewport and
// screen). Candidates: each measured in both engines, the agreeing ones kept.
// Cost: DeviceId.collectSignals() timed in a fresh page per run, the variants
// interleaved, with fontMetrics' own duration as the agent reports it.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions } from 'esbuild';
import { BROWSER_BUILD } from '../../server/browserBuild.js';
import { hasFirefox, launchChromium, launchChromiumProfile, openInFirefox } from '../../test/support/browser.js';

const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1] || 15) || 15;
const EDGE_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36 Edg/156.0.0.0';
const AGENT = fileURLToPath(new URL('../../clients/agent/index.ts', import.meta.url));
const FONT_METRICS = fileURLToPath(new URL('../../clients/agent/signals/fontMetrics.ts', import.meta.url));
const CANDIDATES = fileURLToPath(new URL('./candidates.ts', import.meta.url));

async function bundle(options: BuildOptions): Promise<string> {
  const out = await build({ ...BROWSER_BUILD, ...options });
  return out.outputFiles![0]!.text;
}

const scripts = {
  with: await bundle({ entryPoints: [AGENT], globalName: 'DeviceId' }),
  // The same agent with the collector module replaced by an empty one.
  without: await bundle({
    entryPoints: [AGENT],
    globalName: 'DeviceId',
    plugins: [
      {
        name: 'no-font-metrics',
        setup(b) {
          b.onResolve({ filter: /\/fontMetrics\.js$/ }, () => ({ path: 'fontMetrics', namespace: 'stub' }));
          b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({ contents: 'export const fontMetricsCollectors = {};', loader: 'js' }));
        },
      },
    ],
  }),
  // The collector's per-font tokens, for saying which fonts agree, and the other candidates (candidates.ts).
  probe: await bundle({
    stdin: {
      contents: `export { measureFonts } from ${JSON.stringify(FONT_METRICS)};\nexport { candidates } from ${JSON.stringify(CANDIDATES)};`,
      resolveDir: '.',
      loader: 'ts',
    },
    globalName: 'Probe',
  }),
};

interface Report {
  total: number;
  durations: Record<string, number>;
  fontMetrics: { hash: string; fonts: number; exact: number } | null;
  detail: [string, string][];
  candidates: Record<string, unknown>;
  userAgent: string;
  dpr: number;
}

// Each run is a page `/?run=<id>`; a Firefox chain's pages name the next run.
const plans = new Map<string, { variant: 'with' | 'without'; next: string | null }>();
const waiting = new Map<string, (r: Report) => void>();
let runs = 0;

function page(run: string): string {
  const { variant, next } = plans.get(run)!;
  return `<!doctype html><meta charset="utf-8"><title>agent bench</title><body><p>agent bench</p>
<script src="/agent-${variant}.js"></script><script src="/probe.js"></script>
<script>
(async () => {
  const t0 = performance.now();
  const signals = await DeviceId.collectSignals();
  const total = performance.now() - t0;
  const durations = Object.fromEntries(Object.entries(signals).map(([k, v]) => [k, v.duration]));
  let detail = [];
  try { detail = Probe.measureFonts(); } catch (e) { detail = [['error', String(e)]]; }
  const report = { total, durations, fontMetrics: signals.fontMetrics ? signals.fontMetrics.value : null, detail,
    candidates: Probe.candidates(), userAgent: navigator.userAgent, dpr: devicePixelRatio };
  await fetch('/report?run=${run}', { method: 'POST', body: JSON.stringify(report) });
  ${next ? `location.href = '/?run=${next}';` : ''}
})();
</script>`;
}

const server = createServer((req, res) => {
  const url = new URL(req.url!, 'http://bench');
  const run = url.searchParams.get('run') ?? '';
  if (url.pathname === '/' && plans.has(run)) return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(run));
  const script = { '/agent-with.js': scripts.with, '/agent-without.js': scripts.without, '/probe.js': scripts.probe }[url.pathname];
  if (script) return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
  if (url.pathname === '/report' && req.method === 'POST') {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      res.writeHead(204).end();
      waiting.get(run)?.(JSON.parse(Buffer.concat(chunks).toString()) as Report);
    });
    return;
  }
  res.writeHead(404).end();
});
server.listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/** Plans runs (chained when `chain`), returning their URLs and their reports' promises (60 s each at most). */
function plan(variants: ('with' | 'without')[], chain = false): { urls: string[]; reports: Promise<Report>[] } {
  const ids = variants.map(() => String(++runs));
  ids.forEach((id, i) => plans.set(id, { variant: variants[i]!, next: chain ? (ids[i + 1] ?? null) : null }));
  const reports = ids.map(
    (id) =>
      new Promise<Report>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`run ${id} reported nothing`)), 60_000);
        waiting.set(id, (r) => {
          clearTimeout(timer);
          resolve(r);
        });
      }),
  );
  return { urls: ids.map((id) => `${origin}/?run=${id}`), reports };
}

const interleaved = (n: number) => Array.from({ length: 2 * n }, (_, i) => (i % 2 ? 'without' : 'with'));

// Chromium: a fresh context per run (as a new visitor's page), the browser process warm after the first.
const chromium = await launchChromium();
const chromiumRuns: { variant: string; report: Report }[] = [];
let otherDevice: Report;
try {
  const variants = interleaved(RUNS);
  const { urls, reports } = plan(variants);
  for (const [i, url] of urls.entries()) {
    const context = await chromium.newContext();
    const p = await context.newPage();
    p.on('pageerror', (e) => console.error(`run ${i}: ${e.message}`));
    await p.goto(url);
    chromiumRuns.push({ variant: variants[i]!, report: await reports[i]! });
    await context.close();
  }
  const other = plan(['with']);
  const context = await chromium.newContext({ deviceScaleFactor: 2, viewport: { width: 1600, height: 900 }, screen: { width: 1920, height: 1080 } });
  await (await context.newPage()).goto(other.urls[0]!);
  otherDevice = await other.reports[0]!;
  await context.close();
} finally {
  await chromium.close();
}

// Two Chromium profiles on disk, the second with Edge's user agent.
const profiles: Report[] = [];
for (const userAgent of [undefined, EDGE_UA]) {
  const dir = mkdtempSync(join(tmpdir(), 'deviceid-bench-profile-'));
  try {
    const context = await launchChromiumProfile(dir, userAgent ? { userAgent } : {});
    const { urls, reports } = plan(['with']);
    await (await context.newPage()).goto(urls[0]!);
    profiles.push(await reports[0]!);
    await context.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Firefox: one process page after page (variants interleaved), then a second process on another fresh profile.
const firefoxRuns: { variant: string; report: Report }[] = [];
let firefoxAgain: Report | null = null;
if (hasFirefox) {
  const variants = interleaved(RUNS);
  const { urls, reports } = plan(variants, true);
  const fox = openInFirefox(urls[0]!);
  try {
    for (const [i, r] of reports.entries()) firefoxRuns.push({ variant: variants[i]!, report: await r });
  } finally {
    await fox.close();
  }
  const again = plan(['with']);
  const fox2 = openInFirefox(again.urls[0]!);
  try {
    firefoxAgain = await again.reports[0]!;
  } finally {
    await fox2.close();
  }
}
server.close();

// The report.
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN;
};
const ms = (x: number) => (Number.isNaN(x) ? '–' : `${x.toFixed(1)} ms`);
const short = (r: Report | null | undefined) =>
  r?.fontMetrics ? `${r.fontMetrics.hash.slice(0, 8)}… (${r.fontMetrics.fonts} fonts, ${r.fontMetrics.exact} exact)` : 'omitted';
const base = chromiumRuns.find((r) => r.variant === 'with')!.report;
const same = (r: Report | null | undefined) => (r?.fontMetrics ? (r.fontMetrics.hash === base.fontMetrics?.hash ? 'yes' : 'no') : '–');
const distinct = (rs: { variant: string; report: Report }[]) =>
  new Set(rs.filter((r) => r.variant === 'with').map((r) => JSON.stringify(r.report.fontMetrics))).size;
const firefox = firefoxRuns.find((r) => r.variant === 'with')?.report ?? null;

console.log(`\nBrowsers: ${base.userAgent}${firefox ? ` / ${firefox.userAgent}` : ' / no Firefox'}\n`);
console.log('| Case | fontMetrics | equal to Chromium |');
console.log('| --- | --- | --- |');
console.log(`| Chromium, ${RUNS} fresh contexts | ${short(base)}, ${distinct(chromiumRuns)} distinct value(s) | yes |`);
console.log(`| Chromium profile 1 (fresh user data dir) | ${short(profiles[0])} | ${same(profiles[0])} |`);
console.log(`| Chromium profile 2, Edge user agent | ${short(profiles[1])} | ${same(profiles[1])} |`);
console.log(`| Chromium, DSF 2, 1600x900 viewport, 1920x1080 screen (dpr ${otherDevice.dpr}) | ${short(otherDevice)} | ${same(otherDevice)} |`);
if (firefox) {
  console.log(`| Firefox, ${RUNS} pages in one process | ${short(firefox)}, ${distinct(firefoxRuns)} distinct value(s) | ${same(firefox)} |`);
  console.log(`| Firefox, another process and profile | ${short(firefoxAgain)} | ${same(firefoxAgain)} |`);
}

if (firefox) {
  console.log('\nPer font (the collector’s tokens) and the other candidates, Chromium vs Firefox:\n');
  console.log('| Feature | Chromium | Firefox | agree |');
  console.log('| --- | --- | --- | --- |');
  const fonts = new Map(base.detail);
  const foxFonts = new Map(firefox.detail);
  for (const name of new Set([...fonts.keys(), ...foxFonts.keys()])) {
    const [a, b] = [fonts.get(name) ?? 'absent', foxFonts.get(name) ?? 'absent'];
    console.log(`| font ${name} | ${a} | ${b} | ${a === b ? 'yes' : 'no'} |`);
  }
  for (const key of Object.keys(base.candidates)) {
    const [a, b] = [JSON.stringify(base.candidates[key]), JSON.stringify(firefox.candidates[key])];
    const show = (s: string) => (s.length > 60 ? `${s.slice(0, 57)}…` : s);
    console.log(`| ${key} | ${show(a)} | ${show(b)} | ${a === b ? 'yes' : 'no'} |`);
  }
  const dsf = JSON.stringify(otherDevice.candidates) === JSON.stringify(base.candidates) ? 'all equal' : 'some differ';
  console.log(`\nChromium at DSF 2 vs DSF 1, candidates: ${dsf}`);
}

console.log(`\nCost, a fresh page per run, medians of ${RUNS} (variants interleaved):\n`);
console.log('| Browser | collectSignals() with | without | fontMetrics own | domBlockers |');
console.log('| --- | --- | --- | --- | --- |');
for (const [name, rs] of [
  ['Chromium', chromiumRuns],
  ['Firefox', firefoxRuns],
] as const) {
  if (!rs.length) continue;
  const of = (variant: string, pick: (r: Report) => number | undefined) =>
    median(rs.filter((r) => r.variant === variant).flatMap((r) => (pick(r.report) === undefined ? [] : [pick(r.report)!])));
  console.log(
    `| ${name} | ${ms(of('with', (r) => r.total))} | ${ms(of('without', (r) => r.total))} | ${ms(of('with', (r) => r.durations.fontMetrics))} | ${ms(of('with', (r) => r.durations.domBlockers))} |`,
  );
  const first = rs.find((r) => r.variant === 'with')!.report;
  console.log(`|   first page | ${ms(first.total)} | | ${ms(first.durations.fontMetrics ?? NaN)} | |`);
}
