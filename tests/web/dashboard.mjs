// Drives headless Chromium (Debian's, via playwright-core) through every
// view of the dashboard served by a real `ordo serve`, checks what the
// views say against the API, and saves a screenshot of each view.
// Usage: node dashboard.mjs NODE_MODULES BASE_URL SCREENSHOT_DIR
// Prints "ok NAME" / "FAIL NAME: why" per check and exits non-zero on any
// failure.
import path from 'node:path';
import { createRequire } from 'node:module';

const [modules, base, shots] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(modules), 'x.js'));
const { chromium } = require('playwright-core');

let failed = 0, passed = 0;
function check(name, ok, why = '') {
  if (ok) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name}${why ? ': ' + why : ''}`); }
}

const api = async (p) => (await fetch(base + p)).json();

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
page.setDefaultTimeout(15000);
const problems = [];
page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`); });
page.on('pageerror', (e) => problems.push('page error: ' + e.message));
page.on('requestfailed', (r) => problems.push('request failed: ' + r.url()));

async function view(name, hash, ready) {
  problems.length = 0;
  await page.goto(base + '/' + hash);
  await page.waitForFunction(() => !document.querySelector('main').textContent.startsWith('Loading'));
  if (ready) await page.waitForSelector(ready);
  await page.screenshot({ path: path.join(shots, `dashboard-${name}.png`), fullPage: true });
  const error = await page.$('main .error');
  check(`${name}: renders`, !error, error ? await error.textContent() : '');
  check(`${name}: no console errors`, problems.length === 0, problems.join('; '));
}

// Runs a block of checks; an exception (a selector that never shows) is
// one failure named after the block, and the next blocks still run.
async function attempt(name, block) {
  try { await block(); } catch (error) { check(name, false, error.message.split('\n')[0]); }
}

// Runs
await view('runs', '#/runs', 'main table');
const text = await page.textContent('main');
check('runs: lists every run', ['baseline', 'elastic-w8', 'elastic-w32', 'elastic-w64', 'rank-bound-w8'].every((r) => text.includes(r)));
check('runs: elastic resumes agree with the baseline', /steps agree/.test(text));

// Compare: an elastic resume agrees at every step
await view('compare-elastic', '#/compare?runs=baseline,elastic-w8', '.uplot');
let first = await page.textContent('[data-testid=first-divergent-step]');
check('compare: elastic resume has no divergent step', first.trim() === 'none', first);
check('compare: elastic resume says every step matches',
      (await page.textContent('main')).includes('every common step has the same batch digest'));

// Compare: the rank-bound resume diverges from the step after the resume,
// as the API says
const apiCompare = await api('/api/compare?a=rank-bound&b=rank-bound-w8');
await view('compare-rank-bound', '#/compare?runs=rank-bound,rank-bound-w8', '.uplot');
first = (await page.textContent('[data-testid=first-divergent-step]')).replace(/,/g, '');
check('compare: first divergent step equals the API\'s', Number(first) === apiCompare.first_divergent_step,
      `page ${first}, API ${apiCompare.first_divergent_step}`);
check('compare: rank-bound diverges from the step after the resume', apiCompare.first_divergent_step === 76,
      String(apiCompare.first_divergent_step));
check('compare: lane detail told', (await page.textContent('main')).includes('Lane by lane') ||
      (await page.$$('main .uplot')).length >= 2);
check('compare: divergence told in text too', (await page.textContent('main')).includes('✕ diverged'));

// Compare: two runs whose recipes differ in the first schedule entry's
// weights; the table lists the API's recipe_diff, entry by entry.
const rampCompare = await api('/api/compare?a=ramp&b=ramp-b');
await view('compare-recipes', '#/compare?runs=ramp,ramp-b', '[data-testid=recipe-diff]');
const diffRows = await page.$$eval('[data-testid=recipe-diff-row]',
  (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
const wantRows = rampCompare.recipe_diff.map((d) => ['ramp-b', d.key, JSON.stringify(d.a), JSON.stringify(d.b)]);
check('compare: recipe diff names the changed weights',
      JSON.stringify(rampCompare.recipe_diff.map((d) => d.key)) ===
        JSON.stringify(['schedule[0].weights.moby-dick', 'schedule[0].weights.sotu']) &&
      rampCompare.recipe_diff[0].a === 0.8 && rampCompare.recipe_diff[0].b === 0.7,
      JSON.stringify(rampCompare.recipe_diff));
check('compare: recipe diff table shows the API\'s entries', JSON.stringify(diffRows) === JSON.stringify(wantRows),
      `page ${JSON.stringify(diffRows)}, API ${JSON.stringify(wantRows)}`);
await view('compare-same-recipe', '#/compare?runs=baseline,elastic-w8', '[data-testid=recipe-same]');
check('compare: the same recipe says so, with no diff rows',
      (await page.$$('[data-testid=recipe-diff-row]')).length === 0 &&
      (await page.textContent('[data-testid=recipe-same]')).includes('same recipe'));

// Batches side by side (#/batch): from the compare view, the first
// divergent step opens both runs' batches at it; the samples marked as
// differing are in exactly the lanes the compare API names at that step.
await attempt('batch: from the compare view', async () => {
  const cmp = await api('/api/compare?a=sched-a&b=sched-b');
  check('batch: the scheduled runs diverge from step 5', cmp.first_divergent_step === 5, String(cmp.first_divergent_step));
  await view('compare-sched', '#/compare?runs=sched-a,sched-b', '.uplot');
  problems.length = 0;
  await page.click('[data-testid=first-divergent-step] a');
  await page.waitForSelector('[data-testid=batch-table]');
  await page.screenshot({ path: path.join(shots, 'dashboard-batch-diverging.png'), fullPage: true });
  check('batch: the first divergent step opens both batches at it',
        decodeURIComponent(new URL(page.url()).hash) === '#/batch?runs=sched-a,sched-b&step=5', page.url());
  check('batch: no console errors', problems.length === 0, problems.join('; '));
  const strip = await api('/api/compare/strip?a=sched-a&b=sched-b&from=5&to=5&buckets=1');
  const named = strip.buckets[0][5];
  const marked = await page.$$eval('[data-testid=batch-row][data-differs=true]',
    (rows) => [...new Set(rows.map((r) => Number(r.dataset.lane)))]);
  check('batch: the samples marked are in exactly the lanes compare names at that step',
        named.length > 0 && named.length < 8 && JSON.stringify(marked) === JSON.stringify(named),
        `page ${JSON.stringify(marked)}, API ${JSON.stringify(named)}`);
  check('batch: the lanes are told', (await page.textContent('[data-testid=batch-differ-lanes]')) === named.join(', '));
  const [a, b] = await Promise.all(['sched-a', 'sched-b'].map((r) => api(`/api/runs/${r}/steps/5/batch?text=1`)));
  const digestsDiffer = a.lane_digests.filter((d, i) => d.digest !== b.lane_digests[i].digest).map((d) => d.lane);
  check('batch: those lanes\' digests differ, no other\'s', JSON.stringify(digestsDiffer) === JSON.stringify(named),
        JSON.stringify(digestsDiffer));
  const want = a.samples.flatMap((s, i) => [s, b.samples[i]]).flatMap((s) => s.pieces.map((p) => p.text + (p.text_cut ? '…' : '')));
  const shown = await page.$$eval('[data-testid=preview]', (ps) => ps.map((p) => p.textContent));
  check('batch: each piece has its text preview, as the API decoded it',
        shown.length === want.length && shown.length >= 32 && JSON.stringify(shown) === JSON.stringify(want) &&
        shown.filter((t) => t.trim().length > 0).length >= 32, `${shown.length} shown, ${want.length} pieces`);
  const regenerated = await page.textContent('.regenerated');
  const from = a.from === 'epoch' ? `its flush epoch's lane state (after step ${a.from_step})`
    : a.from_step ? `the checkpoint at step ${a.from_step}` : 'step 0';
  check('batch: it says where the replay started, as the API answered',
        ['epoch', 'checkpoint', 'start'].includes(a.from) && regenerated.includes(`regenerated from ${from}`),
        `${a.from} ${a.from_step}: ${regenerated}`);
  const where = await page.textContent('[data-testid=batch-row] .provenance');
  const p0 = a.samples[0].pieces[0];
  check('batch: each piece names shard, record and tokens',
        where.includes(p0.shard) && where.includes(`record ${p0.record.toLocaleString('en-US')}`) &&
        where.includes(`tokens ${p0.tokens[0].toLocaleString('en-US')}–`), where);
  await page.check('#batch-only-differing');
  const visible = await page.$$eval('[data-testid=batch-row]', (rows) => rows.filter((r) => r.offsetParent !== null).length);
  await page.screenshot({ path: path.join(shots, 'dashboard-batch-only-differing.png') });
  const marks = (await page.$$('[data-testid=batch-row][data-differs=true]')).length;
  check('batch: "only samples that differ" hides the others', visible === marks && marks > 0, `${visible} of ${marks}`);
  // the step before: the same batches, nothing marked
  await view('batch-same-step', '#/batch?runs=sched-a,sched-b&step=4', '[data-testid=batch-table]');
  check('batch: before the schedule entry nothing differs',
        (await page.$$('[data-testid=batch-row][data-differs=true]')).length === 0 &&
        (await page.$$('[data-testid=batch-row]')).length === 16 &&
        (await page.textContent('main')).includes('the two batches are the same'));
  // the strip and the step form open the batch view too
  await page.goto(base + '/#/compare?runs=sched-a,sched-b');
  await page.waitForSelector('#strip-0 .u-over');
  await page.fill('[data-testid=batch-at-step] input', '6');
  await page.click('[data-testid=batch-at-step] button');
  await page.waitForSelector('[data-testid=batch-table]');
  check('batch: the step form opens that step', decodeURIComponent(new URL(page.url()).hash) === '#/batch?runs=sched-a,sched-b&step=6', page.url());
  await page.goto(base + '/#/compare?runs=sched-a,sched-b');
  const over = await (await page.waitForSelector('#strip-0 .u-over')).boundingBox();
  await page.mouse.move(over.x + over.width * 0.99, over.y + over.height / 2);
  await page.mouse.click(over.x + over.width * 0.99, over.y + over.height / 2);
  await page.waitForSelector('[data-testid=batch-table]');
  check('batch: a click on the strip opens the step under it',
        decodeURIComponent(new URL(page.url()).hash) === '#/batch?runs=sched-a,sched-b&step=6', page.url());
});

// An elastic resume: its batch is the baseline's, sample by sample.
await attempt('batch: an identical pair', async () => {
  await view('batch-identical', '#/batch?runs=baseline,elastic-w8&step=76', '[data-testid=batch-table]');
  await page.screenshot({ path: path.join(shots, 'dashboard-batch-identical-top.png') });
  check('batch: an elastic resume\'s batch marks nothing',
        (await page.$$('[data-testid=batch-row][data-differs=true]')).length === 0 &&
        (await page.$$('[data-testid=batch-row]')).length === 64 &&
        (await page.textContent('[data-testid=batch-differ-lanes]')) === 'none');
});

// A rank-bound run cannot be regenerated (422): the view says why and
// keeps its form.
await attempt('batch: rank-bound refused', async () => {
  await page.goto(base + '/#/batch?runs=rank-bound,rank-bound-w8&step=80');
  await page.waitForSelector('main .error');
  await page.screenshot({ path: path.join(shots, 'dashboard-batch-rank-bound.png'), fullPage: true });
  const errors = await page.$$eval('main .error', (ps) => ps.map((p) => p.textContent));
  check('batch: a rank-bound run is refused saying why',
        errors.length === 2 && errors.every((e) => e.includes('rank-bound lanes') && e.includes('step 80 of run')),
        JSON.stringify(errors));
  const kept = await page.$$eval('main form input', (inputs) => inputs.map((i) => i.value));
  check('batch: the refusal keeps the form', JSON.stringify(kept) === '["rank-bound,rank-bound-w8","80"]', JSON.stringify(kept));
});

// Three runs at once
await view('compare-four', '#/compare?runs=baseline,elastic-w8,elastic-w32,elastic-w64', '.uplot');
check('compare: four runs give three comparisons', (await page.$$('[data-testid=compare-summary]')).length === 3);

// Run view, audit, recovery
await view('run', '#/run/elastic-w8', 'main table');
check('run: shows segments with lane plans', (await page.textContent('main')).includes('lane plan'));
const demoMix = (await api('/api/runs/elastic-w8/series?buckets=10')).mixture;
const demoTable = await page.textContent('[data-testid=mixture-table]');
check('run: mixture table gives target and delivered per source',
      demoMix.by_source.length === 2 && demoMix.by_source.every((s) => demoTable.includes(s.name)) &&
      demoTable.includes('50.00%'), demoTable);
check('run: one share chart per source', (await page.$$('[data-testid^=share-chart-] .uplot')).length === 2);

// Run view of a schedule ramping moby-dick 80% -> 20% from step 21 to 41:
// the charts draw the targets along the ramp (50% at its middle, step 31)
// and the shares the steps delivered, as the API gives them.
await view('run-schedule', '#/run/ramp', '[data-testid=share-chart-1] .uplot');
const rampMix = (await api('/api/runs/ramp/series?buckets=100')).mixture;
const rampTable = await page.textContent('[data-testid=mixture-table]');
const asPct = (x) => (100 * x).toFixed(2) + '%';
check('run (schedule): table says each source\'s target mean and delivered share',
      rampMix.by_source.every((s) => rampTable.includes(asPct(s.target_mean)) && rampTable.includes(asPct(s.delivered))),
      rampTable);
const drawn = await page.evaluate(() => [0, 1].map((i) =>
  document.querySelector(`[data-testid=share-chart-${i}]`).plot.data));
const middle = drawn[0][0].indexOf(31);
const near = (a, b) => a != null && Math.abs(a - b) < 1e-8;
check('run (schedule): target drawn along the ramp',
      middle >= 0 && near(drawn[0][1][middle], 0.5) && near(drawn[1][1][middle], 0.5) &&
      near(drawn[0][1][drawn[0][0].indexOf(10)], 0.8) && near(drawn[0][1][drawn[0][0].indexOf(26)], 0.65) &&
      near(drawn[0][1][drawn[0][0].indexOf(50)], 0.2),
      JSON.stringify(drawn[0][1].slice(18, 44)));
const step31 = (await api('/api/runs/ramp/steps?from=31&to=31')).steps[0];
const deviation = await page.evaluate(() => document.querySelector('[data-testid=deviation-chart]').plot.data);
check('run (schedule): deviation in samples drawn, within 2 of the target at every step',
      deviation.length === 3 && deviation[1].length === 60 && deviation.slice(1).every((d) => d.every((x) => Math.abs(x) <= 2)) &&
      near(deviation[1][middle], (step31.delivered_shares[0] - 0.5) * 32),
      JSON.stringify(deviation[1]));
check('run (schedule): delivered drawn as the steps recorded it',
      drawn[0][2][middle] === step31.delivered_shares[0] && drawn[1][2][middle] === step31.delivered_shares[1] &&
      Math.abs(drawn[0][2][middle] * 32 - 16) <= 2,
      `${drawn[0][2][middle]} vs ${JSON.stringify(step31.delivered_shares)}`);

const runs = (await api('/api/runs')).runs;
await view('audit', '#/audit?recipe=' + runs[0].recipe_id, 'main table');
check('audit: agreement shown', (await page.textContent('main')).includes('100%'));
const audit = await api('/api/audit?recipe=' + runs[0].recipe_id);
const longest = Math.max(...audit.runs.map((r) => r.steps));
check('audit: passes over the longest run', audit.passes && audit.passes.horizon >= longest &&
      Array.isArray(audit.passes.sources), JSON.stringify(audit.passes));
for (const p of (audit.passes && audit.passes.sources) || []) {
  const shown = await page.textContent(`[data-testid="passes-${p.source}"]`);
  check(`audit: passes of ${p.source} shown as the API's`, shown === p.passes.toFixed(2), `page ${shown}, API ${p.passes}`);
  const records = await page.textContent(`[data-testid="records-${p.source}"]`);
  check(`audit: records of ${p.source} shown as counted`, p.records &&
        p.records.read === p.records.passed + p.records.filtered + p.records.empty &&
        p.records.passed === p.documents &&
        records.startsWith(`${p.records.read.toLocaleString('en-US')} read: ${p.records.passed.toLocaleString('en-US')} kept`),
        `page ${records}, API ${JSON.stringify(p.records)}`);
  check(`audit: passes of ${p.source} add up`, Math.abs(p.passes - p.samples / p.samples_per_pass) < 1e-9 &&
        p.pass_count === Math.ceil(p.samples / p.samples_per_pass - 1e-9), JSON.stringify(p));
}
check('audit: pass starts told', (await page.textContent('[data-testid=passes]')).includes('tokens a pass'));
await view('recovery', '#/recovery?run=baseline&world_size=32&step=75', 'main pre');
const manifest = await api('/api/runs/baseline/recovery?world_size=32&step=75');
check('recovery: shows the manifest', (await page.textContent('main pre')).includes(manifest.sha256));
check('recovery: curl command', (await page.textContent('main')).includes('curl -s'));

// The recovery view folds its rank table beyond 8 ranks: the manifest's
// curl command stays in the first screen.
await attempt('recovery: rank table folded', async () => {
  check('recovery: 32 ranks folded', await page.$eval('[data-testid=rank-lanes]', (d) => !d.open));
  const curlTop = await page.$eval('main code', () => [...document.querySelectorAll('main p')]
    .find((p) => p.textContent.startsWith('Fetch it')).getBoundingClientRect().top);
  check('recovery: curl command visible without scrolling', curlTop < 900, String(curlTop));
});

// Run view: its checkpoints' recovery links carry the run's world size and
// land on the manifest, not on an empty form.
await attempt('run: recovery links', async () => {
  const w8 = await api('/api/runs/elastic-w8');
  await view('run-links', '#/run/elastic-w8', 'main table');
  const recoveryHref = await page.$eval('main a[href^="#/recovery"]', (a) => a.getAttribute('href'));
  check('run: recovery link carries world_size', new URLSearchParams(recoveryHref.split('?')[1]).get('world_size') ===
        String(w8.world_size), recoveryHref);
  await page.click('main a[href^="#/recovery"]');
  await page.waitForSelector('main pre');
  check('run: recovery link lands on the manifest', (await page.textContent('main pre')).includes('"sha256"'));
});

// An error keeps the form, with what was typed, to be corrected.
await attempt('errors keep the form', async () => {
  await page.goto(base + '/#/recovery?run=baseline&world_size=7&step=75');
  await page.waitForSelector('main .error');
  await page.screenshot({ path: path.join(shots, 'dashboard-recovery-error.png'), fullPage: true });
  const kept = await page.$$eval('main form input', (inputs) => inputs.map((i) => i.value));
  check('recovery: an error keeps the form and its input', JSON.stringify(kept) === '["baseline","75","7"]' &&
        /7/.test(await page.textContent('main .error')), JSON.stringify(kept));
  await page.fill('main form input[aria-label="new world size"]', '8');
  await page.click('main form button');
  await page.waitForSelector('main pre');
  check('recovery: the corrected form shows the manifest', (await page.textContent('main pre')).includes('"world_size": 8'));
  await page.goto(base + '/#/compare?runs=baseline,no-such-run');
  await page.waitForSelector('main .error');
  check('compare: an error keeps the form', (await page.$eval('#runs-input', (i) => i.value)) === 'baseline,no-such-run');
});

// A run created for a resume (its first step 21) says where it started.
await attempt('runs: a run created for a resume', async () => {
  await view('runs-resumed', '#/runs', 'main table');
  const resumedRow = await page.$$eval('main tr', (rows) => rows.map((r) => r.textContent)
    .find((t) => t.includes('resumed via api')));
  check('runs: a run created for a resume shows the step it started at', /W=4 from 21/.test(resumedRow || ''),
        String(resumedRow));
  await view('run-resumed', '#/run/' + encodeURIComponent('resumed via api'), 'main table');
  const segment = await page.$eval('main table tbody tr', (r) => r.children[3].textContent);
  check('run: its segment starts at the step it started at', segment.startsWith('21'), segment);
});

// Step axes tick at whole steps, even for a run of three steps.
await attempt('run: step axis ticks', async () => {
  await view('run-short', '#/run/short', '[data-testid=share-chart-0] .uplot');
  // the ticks uPlot drew (kept by the axis' formatter) and those it placed
  const ticks = await page.evaluate(() => document.querySelector('[data-testid=share-chart-0]').plot.stepTicks);
  const placed = await page.evaluate(() => document.querySelector('[data-testid=share-chart-0]').plot.axes[0]._splits);
  check('run: step axis places whole steps only', Array.isArray(placed) && placed.every((t) => Number.isInteger(t)),
        JSON.stringify(placed));
  check('run: step axis ticks at whole steps only', Array.isArray(ticks) && ticks.length >= 2 &&
        ticks.every((t) => Number.isInteger(t)), JSON.stringify(ticks));
});

// The ablation grid of the reduced experiment: one row per (recipe,
// loader), the world sizes as columns; ordo's cells of a recipe agree on
// every batch, the rank-bound W=2 cells do not; the held-out losses are
// those the experiment measured.
if (process.env.ORDO_EXPERIMENT) {
  await attempt('ablation grid', async () => {
    const { readFileSync } = await import('node:fs');
    const results = JSON.parse(readFileSync(process.env.ORDO_EXPERIMENT, 'utf8'));
    check('experiment: 8 cells, ordo\'s agree with W=1, rank-bound W=2 does not',
          results.cells.length === 8 && results.cells.every((c) =>
            c.same_batches_as_w1 === (c.lane_binding === 'logical' || c.world_size === 1)),
          JSON.stringify(results.cells.map((c) => [c.run, c.same_batches_as_w1])));
    await view('ablation', '#/ablation?group=' + encodeURIComponent(results.group), '[data-testid=ablation-loss-3] .uplot');
    check('ablation: one row per recipe and loader', (await page.$$('[data-testid=ablation-row]')).length === 4);
    for (const c of results.cells) {
      const cell = await page.$(`[data-testid="cell-${c.run}"]`);
      const shown = cell && await cell.evaluate((e) => [Number(e.dataset.heldout), e.dataset.same === 'true']);
      check(`ablation: cell ${c.run} shows its held-out loss and agreement`, shown &&
            Math.abs(shown[0] - c.heldout_loss) < 1e-9 && shown[1] === c.same_batches_as_w1,
            JSON.stringify(shown) + ' vs ' + JSON.stringify(c));
    }
    const spreads = await page.$$eval('[data-testid=spread]', (cells) => cells.map((c) => c.textContent));
    check('ablation: ordo rows spread 0.0000, rank-bound rows not', spreads.length === 4 &&
          spreads.slice(0, 2).every((x) => x === '0.0000') && spreads.slice(2).every((x) => Number(x) > 0),
          JSON.stringify(spreads));
    check('ablation: recipe effect drawn against the spread', (await page.$$('.bars .bar.effect')).length === 2);
  });
}

// Keyboard: the views are reachable by Tab, from a fresh load (a hash
// change keeps the document, and where the last click left the focus)
await page.goto(base + '/#/runs');
await page.reload();
await page.waitForSelector('main table');
await page.keyboard.press('Tab');
await page.keyboard.press('Tab');
const focused = await page.evaluate(() => document.activeElement && document.activeElement.textContent);
check('keyboard: navigation links take focus', ['Runs', 'Compare'].includes(focused), String(focused));

// A server that wants a token for reads: the dashboard asks once, then
// keeps it for the session.
if (process.env.ORDO_TOKEN_URL) {
  const other = await browser.newPage();
  const seen = [];
  other.on('pageerror', (e) => seen.push(e.message));
  await other.goto(process.env.ORDO_TOKEN_URL + '/#/runs');
  await other.waitForSelector('#token-dialog[open]');
  await other.screenshot({ path: path.join(shots, 'dashboard-token.png') });
  await other.fill('#token-input', process.env.ORDO_TOKEN);
  await other.click('#token-form button');
  await other.waitForSelector('main table');
  check('token: asked once, then the runs show', (await other.textContent('main')).includes('elastic-w8'));
  await other.goto(process.env.ORDO_TOKEN_URL + '/#/compare?runs=baseline,elastic-w8');
  await other.waitForSelector('[data-testid=first-divergent-step]');
  const asked = await other.$('#token-dialog[open]');
  check('token: kept for the session', !asked && seen.length === 0, seen.join('; '));
  await other.close();
}

await browser.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
