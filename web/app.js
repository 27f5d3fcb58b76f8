// The ordo dashboard: runs, one run, comparisons, audits and recovery
// manifests, read from the service's API. State lives in the URL hash, so
// every view is a link. Charts are drawn by uPlot.
'use strict';

const main = document.getElementById('main');
const COLORS = { match: '#2e7d32', diverge: '#c62828', missing: '#9e9e9e' };
const LINE_COLORS = ['#1a56db', '#e65100', '#6a1b9a', '#00838f', '#ad1457', '#558b2f'];

// ---- the API, with a reader token asked for once when the server wants one

function token() { return sessionStorage.getItem('ordo-token'); }

function askToken() {
  return new Promise((resolve) => {
    const dialog = document.getElementById('token-dialog');
    const form = document.getElementById('token-form');
    form.onsubmit = () => {
      sessionStorage.setItem('ordo-token', document.getElementById('token-input').value.trim());
      resolve();
    };
    dialog.showModal();
  });
}

async function api(path) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const headers = token() ? { Authorization: 'Bearer ' + token() } : {};
    const response = await fetch(path, { headers });
    if (response.status === 401) { await askToken(); continue; }
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  }
  throw new Error('not authorised');
}

// ---- small DOM helpers

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === 'text') node.textContent = value;
    else if (key === 'class') node.className = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child == null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const fmt = (n) => (n == null ? '–' : Number(n).toLocaleString('en-US'));
const pct = (x) => (x == null ? '–' : (100 * x).toFixed(x === 1 || x === 0 ? 0 : 2) + '%');
const runLink = (name) => el('a', { href: '#/run/' + encodeURIComponent(name) }, name);
const short = (id) => (id ? id.slice(0, 12) + '…' : '–');

function badge(kind, text) {
  const symbol = { match: '✓ ', diverge: '✕ ', missing: '– ' }[kind] || '';
  return el('span', { class: 'badge ' + kind }, symbol + text);
}

function table(headers, rows) {
  return el('table', {},
    el('thead', {}, el('tr', {}, headers.map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, rows.map((row) => el('tr', {}, row.map((cell) => el('td', {}, cell))))));
}

// Where each segment starts; a run created for a resume (its first step
// recorded after its first segment's start) shows the step it started at.
function worldHistory(segments, firstStep) {
  return segments.map((s, i) => {
    const from = i === 0 && firstStep != null && firstStep > s.start_step ? firstStep : s.start_step;
    return `W=${s.world_size}${s.lane_binding === 'rank' ? ' (rank)' : ''} from ${fmt(from)}`;
  }).join(' → ');
}

// Step axes tick at whole steps only (1, 2, 5, 10, … apart); the ticks
// drawn are kept on the chart (u.stepTicks) for whoever reads it.
const STEP_INCRS = [];
for (let p = 1; p <= 1e12; p *= 10) STEP_INCRS.push(p, 2 * p, 5 * p);
const stepAxis = () => ({ label: 'step', incrs: STEP_INCRS,
  values: (u, ticks) => { u.stepTicks = ticks; return ticks.map(fmt); } });

// A view's form with the error under it: the input stays to be corrected.
function formError(title, form, error) {
  main.replaceChildren(el('h1', {}, title), form,
    el('p', { class: 'error', role: 'alert' }, 'Error: ' + error.message));
}

function chartWidth() { return Math.max(320, Math.min(main.clientWidth - 10, 1150)); }

// ---- routing

function route() {
  const hash = location.hash || '#/runs';
  const [path, queryString] = hash.slice(1).split('?');
  const params = new URLSearchParams(queryString || '');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  for (const a of document.querySelectorAll('nav a'))
    a.toggleAttribute('aria-current', a.dataset.view === (parts[0] === 'run' ? 'runs' : parts[0]));
  if (document.querySelector('nav a[aria-current]'))
    document.querySelector('nav a[aria-current]').setAttribute('aria-current', 'page');
  main.replaceChildren(el('p', { class: 'muted' }, 'Loading…'));
  const views = { runs: viewRuns, run: () => viewRun(parts[1]), compare: () => viewCompare(params),
                  audit: () => viewAudit(params), recovery: () => viewRecovery(params),
                  ablation: () => viewAblation(params), batch: () => viewBatch(params) };
  (views[parts[0]] || viewRuns)().catch((error) => {
    main.replaceChildren(el('p', { class: 'error', role: 'alert' }, 'Error: ' + error.message));
  });
}
window.addEventListener('hashchange', route);

// ---- Runs: grouped by recipe and group tag

async function viewRuns() {
  const { runs } = await api('/api/runs');
  const details = await Promise.all(runs.map((r) => api('/api/runs/' + encodeURIComponent(r.name))));
  const agreement = await Promise.all(runs.map((r) => (r.baseline
    ? api(`/api/compare?a=${encodeURIComponent(r.baseline)}&b=${encodeURIComponent(r.name)}`)
    : null)));
  const groups = new Map();
  runs.forEach((run, i) => {
    const key = run.recipe_id + '\u0000' + (run.group || '');
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push([run, details[i], agreement[i]]);
  });
  const sections = [...groups.values()].map((members) => {
    const first = members[0][0];
    const rows = members.map(([run, detail, cmp]) => [
      runLink(run.name),
      worldHistory(detail.segments, detail.first_step),
      fmt(run.steps),
      run.baseline ? runLink(run.baseline) : el('span', { class: 'muted' }, 'baseline'),
      cmp ? (cmp.diverged ? badge('diverge', `diverged from step ${fmt(cmp.first_divergent_step)}`)
                          : badge('match', `${fmt(cmp.matched)} of ${fmt(cmp.steps_compared)} steps agree`))
          : '–',
      run.baseline ? el('a', { href: `#/compare?runs=${encodeURIComponent(run.baseline)},${encodeURIComponent(run.name)}` }, 'compare') : '',
    ]);
    return el('section', { class: 'group' },
      el('h2', {}, `Recipe ${first.recipe_name || ''} `, el('code', {}, short(first.recipe_id)),
         first.group ? ` · group ${first.group}` : ''),
      el('p', {}, el('a', { href: '#/audit?recipe=' + first.recipe_id }, 'audit this recipe')),
      table(['run', 'world sizes', 'steps', 'baseline', 'agreement with baseline', ''], rows));
  });
  main.replaceChildren(el('h1', {}, 'Runs'),
    ...(runs.length ? sections : [el('p', {}, 'No runs yet: ordo run, or report through the API.')]));
}

// ---- Run: segments, checkpoints, loss, token shares

async function viewRun(name) {
  const run = await api('/api/runs/' + encodeURIComponent(name));
  const [{ checkpoints }, series] = await Promise.all([
    api(`/api/runs/${encodeURIComponent(name)}/checkpoints`),
    api(`/api/runs/${encodeURIComponent(name)}/series?buckets=${chartWidth()}`)]);
  const segmentRows = run.segments.map((s, i) => [
    fmt(s.ordinal), fmt(s.world_size), s.lane_binding,
    `${fmt(i === 0 && run.first_step > s.start_step ? run.first_step : s.start_step)}–${fmt(s.end_step)}`,
    s.resumed_from ? fmt(s.resumed_from) : '–',
    el('code', {}, s.lane_plan.map((lanes, r) => `${r}: ${lanes.join(',')}`).join('  '))]);
  const checkpointRows = checkpoints.map((c) => [fmt(c.step), fmt(c.lanes),
    `${fmt(c.state_bytes)} bytes (${(c.state_bytes / c.lanes).toFixed(1)} per lane)`,
    el('a', { href: `#/recovery?run=${encodeURIComponent(name)}&step=${c.step}&world_size=${run.world_size}` },
       'recovery manifest')]);
  const view = [el('h1', {}, 'Run ', el('code', {}, name)),
    el('div', { class: 'summary' },
      el('div', {}, el('strong', {}, fmt(run.steps)), 'steps recorded'),
      el('div', {}, el('strong', {}, fmt(run.lanes)), 'lanes'),
      el('div', {}, el('strong', {}, fmt(run.world_size)), 'world size now'),
      el('div', {}, el('strong', {}, fmt(run.conflicts)), 'conflicting reports'),
      el('div', {}, el('strong', {}, run.baseline ? runLink(run.baseline) : '–'), 'baseline')),
    el('p', {}, 'Recipe ', el('code', {}, run.recipe_id)),
    el('h2', {}, 'Segments'),
    table(['#', 'world size', 'binding', 'steps', 'resumed from', 'lane plan (rank: lanes)'], segmentRows),
    el('h2', {}, 'Checkpoints'),
    checkpointRows.length ? table(['step', 'lanes', 'size', ''], checkpointRows) : el('p', { class: 'muted' }, 'none')];
  const withLoss = series.buckets.filter((b) => b.loss != null);
  view.push(el('h2', {}, 'Loss'));
  const lossBox = el('div', { class: 'chart', id: 'loss-chart' });
  view.push(withLoss.length ? lossBox : el('p', { class: 'muted' }, 'No loss reported for this run.'));
  view.push(el('h2', {}, 'Mixture: target share against delivered, per source'));
  const shareBoxes = mixtureView(series, view);
  main.replaceChildren(...view);
  if (withLoss.length) lineChart(lossBox, 'loss', [name], [series]);
  shareBoxes.forEach((box, i) => shareChart(box, series, i));
  if (shareBoxes.deviation) deviationChart(shareBoxes.deviation, series);
}

// The mixture's summary per source (over the run) and, per source, a small
// chart of its target share (the recipe's weights or schedule, ramps
// included) and the share its steps delivered. Returns the chart boxes.
function mixtureView(series, view) {
  const { mixture } = series;
  if (!mixture.by_source.length) {
    view.push(el('p', { class: 'muted', 'data-testid': 'mixture-unavailable' },
      'No target shares for this run’s recipe: ' + (mixture.unavailable || 'it has no sources') + '.'));
    return [];
  }
  view.push(el('p', { class: 'muted' }, mixture.measured_steps
    ? `Over ${fmt(mixture.measured_steps)} of ${fmt(mixture.steps)} steps with per-source token counts; a step’s deviation is (delivered − target) × ${fmt(mixture.global_batch)} samples.`
    : 'This run’s steps were recorded without per-source token counts: only the targets are known.'));
  view.push(el('div', { 'data-testid': 'mixture-table' }, shareTable(mixture)));
  const boxes = mixture.by_source.map((s, i) => {
    const box = el('div', { class: 'chart share', 'data-testid': 'share-chart-' + i });
    view.push(el('h3', {}, s.name, ': target (dashed) and delivered share'), box);
    return box;
  });
  if (mixture.measured_steps && mixture.global_batch) {
    const box = el('div', { class: 'chart', 'data-testid': 'deviation-chart' });
    view.push(el('h3', {}, 'Delivered − target, in samples of the step’s ', fmt(mixture.global_batch)), box);
    boxes.deviation = box;
  }
  return boxes;
}

function shareTable(mixture) {
  const samples = (x) => (x == null ? '–' : (x >= 0 ? '+' : '−') + Math.abs(x).toFixed(2));
  return table(['source', 'target (mean)', 'delivered', 'worst step', 'delivered − target (samples)'],
    mixture.by_source.map((s) => [s.name, pct(s.target_mean), pct(s.delivered),
      s.worst_step == null ? '–' : fmt(s.worst_step), samples(s.worst_deviation_samples)]));
}

function lineChart(box, label, names, allSeries) {
  const xs = allSeries[0].buckets.map((b) => (b.from + b.to) / 2);
  const data = [xs];
  const seriesOpts = [{ label: 'step' }];
  allSeries.forEach((s, i) => {
    const byFrom = new Map(s.buckets.map((b) => [b.from, b.loss]));
    data.push(allSeries[0].buckets.map((b) => byFrom.get(b.from) ?? null));
    seriesOpts.push({ label: names[i], stroke: LINE_COLORS[i % LINE_COLORS.length], width: 1.5,
                      dash: i ? [6, 4] : undefined });
  });
  new uPlot({ width: chartWidth(), height: 260, series: seriesOpts,
              scales: { x: { time: false } }, axes: [stepAxis(), { label }] }, data, box);
}

const percentTicks = (u, ticks) => ticks.map((t) => (100 * t).toFixed(0) + '%');

// One source's target (dashed) and delivered (solid) share by step; a
// bucket of several steps shows their mean target and their delivered share.
function shareChart(box, series, i) {
  const color = LINE_COLORS[i % LINE_COLORS.length];
  const xs = series.buckets.map((b) => (series.width > 1 ? (b.from + b.to) / 2 : b.from));
  const data = [xs, series.buckets.map((b) => b.target_shares[i]),
                series.buckets.map((b) => b.delivered_shares[i])];
  box.plot = new uPlot({ width: chartWidth(), height: 220,
    series: [{ label: 'step' },
             { label: 'target', stroke: color, width: 2.5, dash: [8, 5], points: { show: false },
               value: (u, v) => pct(v) },
             { label: 'delivered', stroke: '#212121', width: 1.25, points: { show: false },
               value: (u, v) => pct(v) }],
    scales: { x: { time: false }, y: { range: [0, 1] } },
    axes: [stepAxis(), { label: 'share', values: percentTicks }] },
  data, box);
}

// Every source's delivered − target by step, in samples of the global
// batch: how far each step is from its target (the loader keeps it within 2).
function deviationChart(box, series) {
  const xs = series.buckets.map((b) => (series.width > 1 ? (b.from + b.to) / 2 : b.from));
  const batch = series.mixture.global_batch;
  const data = [xs];
  const opts = [{ label: 'step' }];
  series.sources.forEach((name, i) => {
    data.push(series.buckets.map((b) => (b.delivered_shares[i] == null || b.target_shares[i] == null
      ? null : (b.delivered_shares[i] - b.target_shares[i]) * batch)));
    opts.push({ label: name, stroke: LINE_COLORS[i % LINE_COLORS.length], width: 1.25,
                points: { show: false }, value: (u, v) => (v == null ? '–' : v.toFixed(2)) });
  });
  box.plot = new uPlot({ width: chartWidth(), height: 200, series: opts,
    scales: { x: { time: false }, y: { range: (u, min, max) => [Math.min(-2, min), Math.max(2, max)] } },
    axes: [stepAxis(), { label: 'samples' }] }, data, box);
}

// ---- Compare: agreement strip, first divergence, lane map, loss, recipes

async function viewCompare(params) {
  const names = (params.get('runs') || '').split(',').filter(Boolean);
  const form = compareForm(names);
  if (names.length < 2) {
    main.replaceChildren(el('h1', {}, 'Compare runs'), form,
      el('p', { class: 'muted' }, 'Choose two or more runs: each is compared with the first.'));
    return;
  }
  const buckets = chartWidth();
  const base = names[0];
  const others = names.slice(1);
  let compares, strips, series;
  try {
    [compares, strips, series] = await Promise.all([
      Promise.all(others.map((n) => api(`/api/compare?a=${encodeURIComponent(base)}&b=${encodeURIComponent(n)}`))),
      Promise.all(others.map((n) => api(`/api/compare/strip?a=${encodeURIComponent(base)}&b=${encodeURIComponent(n)}&buckets=${buckets}`))),
      Promise.all(names.map((n) => api(`/api/runs/${encodeURIComponent(n)}/series?buckets=${buckets}`)))]);
  } catch (error) { formError('Compare runs', form, error); return; }
  const view = [el('h1', {}, 'Compare ', el('code', {}, base), ' with ', others.join(', ')), form];
  others.forEach((other, i) => {
    const cmp = compares[i];
    view.push(el('h2', {}, `${base} ↔ ${other}`),
      el('div', { class: 'summary', 'data-testid': 'compare-summary' },
        el('div', {}, el('strong', {}, fmt(cmp.steps_compared)), 'steps compared'),
        el('div', {}, el('strong', {}, fmt(cmp.matched)), 'matched'),
        el('div', {}, el('strong', {}, fmt(cmp.diverged)), 'diverged'),
        el('div', {}, el('strong', { 'data-testid': 'first-divergent-step' },
                         cmp.first_divergent_step == null ? 'none'
                           : el('a', { href: batchHash([base, other], cmp.first_divergent_step),
                                       title: 'both runs\' batches at this step' }, fmt(cmp.first_divergent_step))),
           'first divergent step'),
        el('div', {}, el('strong', {}, `${fmt(cmp.only_a)} / ${fmt(cmp.only_b)}`), 'only in one run')),
      el('p', {}, cmp.diverged
        ? badge('diverge', `diverged: ${cmp.divergent_ranges.slice(0, 8).map((r) => r[0] === r[1] ? fmt(r[0]) : `${fmt(r[0])}–${fmt(r[1])}`).join(', ')}${cmp.divergent_ranges.length > 8 ? ' …' : ''}`)
        : badge('match', 'every common step has the same batch digest'),
        cmp.conflicts_a || cmp.conflicts_b ? [' ', badge('diverge', `conflicting reports from step ${fmt(cmp.first_conflict_step)}`)] : null),
      legend(),
      el('div', { class: 'chart', id: 'strip-' + i, role: 'img', title: 'click a step: both runs\' batches at it',
                  'aria-label': `Agreement per step between ${base} and ${other}: ${fmt(cmp.matched)} matched, ${fmt(cmp.diverged)} diverged` }),
      batchAtStep(base, other, cmp.first_divergent_step || 1));
    if (cmp.diverged && cmp.lanes_differ.length)
      view.push(el('h3', {}, 'Lanes × steps: where lanes differ'),
        el('p', {}, `Lanes that differ: ${cmp.lanes_differ.join(', ')}`),
        el('div', { class: 'chart', id: 'lanes-' + i, role: 'img',
                    'aria-label': `Lanes that differ: ${cmp.lanes_differ.join(', ')}` }));
    else if (cmp.diverged)
      view.push(el('p', { class: 'muted' }, 'Lane by lane: not comparable (the runs report different lane counts at the divergent steps).'));
  });
  view.push(el('h2', {}, 'Loss'));
  const lossBox = el('div', { class: 'chart' });
  const anyLoss = series.some((s) => s.buckets.some((b) => b.loss != null));
  view.push(anyLoss ? lossBox : el('p', { class: 'muted' }, 'No loss reported for these runs.'));
  view.push(el('h2', {}, 'Recipes'), recipeTable(names, compares));
  main.replaceChildren(...view);
  others.forEach((_, i) => {
    stripChart(document.getElementById('strip-' + i), strips[i], (step) => { location.hash = batchHash([base, others[i]], step); });
    if (compares[i].diverged && compares[i].lanes_differ.length)
      laneMap(document.getElementById('lanes-' + i), strips[i]);
  });
  if (anyLoss) lineChart(lossBox, 'loss', names, series);
}

// "Batches at step N": opens the batch view of both runs at a step.
function batchAtStep(base, other, step) {
  const input = el('input', { value: step, size: 8, inputmode: 'numeric', 'aria-label': `step of ${base} and ${other}` });
  return el('form', { class: 'inline', 'data-testid': 'batch-at-step', onsubmit: (e) => {
    e.preventDefault();
    location.hash = batchHash([base, other], input.value.trim());
  } }, el('label', {}, 'Both batches at step', input), el('button', { type: 'submit' }, 'Show batches'),
    el('span', { class: 'muted' }, 'or click a step on the strip'));
}

function legend() {
  return el('p', { class: 'legend' },
    el('span', {}, el('span', { class: 'swatch match' }), '✓ matched'),
    el('span', {}, el('span', { class: 'swatch diverge' }), '✕ diverged (any divergent step in a bucket)'),
    el('span', {}, el('span', { class: 'swatch missing' }), '– in one run only'));
}

function compareForm(names) {
  const input = el('input', { id: 'runs-input', value: names.join(','), size: 40, 'aria-label': 'runs to compare' });
  return el('form', { class: 'inline', onsubmit: (e) => {
    e.preventDefault();
    location.hash = '#/compare?runs=' + input.value.split(',').map((s) => encodeURIComponent(s.trim())).join(',');
  } }, el('label', {}, 'Runs (first is the reference), comma-separated', input), el('button', { type: 'submit' }, 'Compare'));
}

// One bar per bucket: diverged wins, then missing, then matched.
// onStep(step), when given, is called with the first step of the bucket
// clicked.
function stripChart(box, strip, onStep) {
  const xs = strip.buckets.map((b) => b[0]);
  const state = strip.buckets.map((b) => (b[3] > 0 ? 2 : b[4] > 0 && b[2] === 0 ? 1 : b[2] > 0 ? 0 : -1));
  const colors = [COLORS.match, COLORS.missing, COLORS.diverge];
  const plot = new uPlot({
    width: chartWidth(), height: 110, legend: { show: false }, cursor: { show: true },
    scales: { x: { time: false, range: [xs[0], strip.buckets[strip.buckets.length - 1][1]] }, y: { range: [0, 1] } },
    axes: [stepAxis(), { show: false }],
    series: [{}, { label: 'agreement', paths: () => null, points: { show: false } }],
    hooks: { draw: [(u) => {
      const ctx = u.ctx;
      strip.buckets.forEach((b, i) => {
        if (state[i] < 0) return;
        const x0 = u.valToPos(b[0] - 0.5, 'x', true), x1 = u.valToPos(b[1] + 0.5, 'x', true);
        const y0 = u.bbox.top, y1 = u.bbox.top + u.bbox.height;
        ctx.fillStyle = colors[state[i]];
        ctx.fillRect(x0, y0, Math.max(1, x1 - x0), y1 - y0);
        if (state[i] === 2) { // diverged: also marked by shape, a cross-hatch
          ctx.fillStyle = 'rgba(255,255,255,0.6)';
          for (let y = y0; y < y1; y += 8) ctx.fillRect(x0, y, Math.max(1, x1 - x0), 3);
        }
      });
    }] },
  }, [xs, state.map(() => 0.5)], box);
  if (!onStep) return;
  box.classList.add('clickable');
  plot.over.addEventListener('click', () => {
    const x = plot.posToVal(plot.cursor.left, 'x');
    const bucket = strip.buckets.find((b) => x >= b[0] - 0.5 && x < b[1] + 0.5);
    if (bucket) onStep(bucket[0]);
  });
}

function laneMap(box, strip) {
  const lanes = strip.lanes;
  const xs = strip.buckets.map((b) => b[0]);
  new uPlot({
    width: chartWidth(), height: Math.min(420, 100 + lanes * 14), legend: { show: false },
    scales: { x: { time: false, range: [xs[0], strip.buckets[strip.buckets.length - 1][1]] }, y: { range: [-0.5, lanes - 0.5] } },
    axes: [stepAxis(), { label: 'lane', incrs: STEP_INCRS }],
    series: [{}, { paths: () => null, points: { show: false } }],
    hooks: { draw: [(u) => {
      const ctx = u.ctx;
      ctx.fillStyle = COLORS.diverge;
      strip.buckets.forEach((b) => {
        if (!b[5].length) return;
        const x0 = u.valToPos(b[0] - 0.5, 'x', true), x1 = u.valToPos(b[1] + 0.5, 'x', true);
        for (const lane of b[5]) {
          const y0 = u.valToPos(lane + 0.5, 'y', true), y1 = u.valToPos(lane - 0.5, 'y', true);
          ctx.fillRect(x0, y0, Math.max(1, x1 - x0), Math.max(1, y1 - y0));
        }
      });
    }] },
  }, [xs, xs.map(() => 0)], box);
}

// How each run's recipe differs from the first's: the entries of the
// API's recipe_diff (the library's ordo_recipe_diff), one row each.
function recipeTable(names, compares) {
  const first = compares[0].recipes;
  if (compares.every((c) => c.recipes.same))
    return el('p', { 'data-testid': 'recipe-same' }, badge('match', 'same recipe'), ' ', el('code', {}, first.a));
  const value = (v) => {
    if (v === null) return el('em', { class: 'muted' }, '(none)');
    const text = JSON.stringify(v);
    return el('code', { class: 'diff', title: text }, text.length > 80 ? text.slice(0, 80) + '…' : text);
  };
  const rows = [];
  compares.forEach((c, i) => {
    if (c.recipes.same) {
      rows.push(el('tr', {}, el('td', {}, names[i + 1]), el('td', { colspan: 3 }, el('em', {}, 'same recipe as ' + names[0]))));
      return;
    }
    for (const d of c.recipe_diff)
      rows.push(el('tr', { 'data-testid': 'recipe-diff-row' }, el('td', {}, names[i + 1]),
        el('td', {}, el('code', {}, d.key)), el('td', {}, value(d.a)), el('td', {}, value(d.b))));
  });
  return el('table', { 'data-testid': 'recipe-diff' },
    el('thead', {}, el('tr', {}, ['run', 'key', names[0], 'this run'].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, rows));
}

// ---- Audit: per recipe, all runs against their baselines

async function viewAudit(params) {
  const recipe = params.get('recipe');
  const { runs } = await api('/api/runs');
  const recipes = [...new Map(runs.map((r) => [r.recipe_id, r])).values()];
  const select = el('select', { id: 'recipe-select', 'aria-label': 'recipe' },
    recipes.map((r) => el('option', Object.assign({ value: r.recipe_id }, r.recipe_id === recipe ? { selected: '' } : {}),
                          `${r.recipe_name || 'recipe'} ${short(r.recipe_id)}`)));
  const form = el('form', { class: 'inline', onsubmit: (e) => { e.preventDefault(); location.hash = '#/audit?recipe=' + select.value; } },
    el('label', {}, 'Recipe', select), el('button', { type: 'submit' }, 'Audit'));
  if (!recipe) { main.replaceChildren(el('h1', {}, 'Audit'), form); return; }
  let audit;
  try { audit = await api('/api/audit?recipe=' + encodeURIComponent(recipe)); }
  catch (error) { formError('Audit', form, error); return; }
  const rows = audit.runs.map((r) => [runLink(r.run), r.baseline ? runLink(r.baseline) : el('span', { class: 'muted' }, 'baseline'),
    r.world_sizes.map((w) => `W=${w.world_size}${w.binding === 'rank' ? ' (rank)' : ''} from ${fmt(w.from_step)}`).join(' → '),
    fmt(r.steps),
    r.agreement == null ? '–' : (r.agreement === 1 ? badge('match', pct(r.agreement)) : badge('diverge', pct(r.agreement))),
    r.first_divergent_step == null ? '–' : fmt(r.first_divergent_step)]);
  main.replaceChildren(el('h1', {}, 'Audit of recipe ', el('code', {}, short(recipe))), form,
    table(['run', 'baseline', 'world sizes', 'steps', 'agreement', 'first divergent step'], rows),
    passesSection(audit.passes));
}

// How often each source repeats over the recipe's longest run: tokens per
// byte, one pass's tokens and samples, the steps its next passes start at.
function passStarts(p) {
  const starts = p.pass_starts.slice(1, 4).map((step, i) => `pass ${i + 2} at step ${fmt(step)}`);
  if (p.pass_count > 5) starts.push('…');
  if (p.pass_count > 4) starts.push(`pass ${fmt(p.pass_count)} at step ${fmt(p.last_pass_start)}`);
  return starts.length ? starts.join(', ') : el('span', { class: 'muted' }, 'no repeat');
}

function passesSection(passes) {
  if (!passes) return null;
  const title = el('h2', {}, `How often each source repeats (${fmt(passes.horizon)} steps, the longest run)`);
  if (!passes.sources) return el('section', { 'data-testid': 'passes' }, title, el('p', { class: 'muted' }, 'Not planned: ' + passes.why));
  const records = (p) => p.records
    ? el('span', { 'data-testid': 'records-' + p.source },
      `${fmt(p.records.read)} read: ${fmt(p.records.passed)} kept, ${fmt(p.records.filtered)} filtered out, ${fmt(p.records.empty)} empty`)
    : '';
  const rows = passes.sources.map((p) => [p.source, records(p), p.tokens_per_byte.toFixed(4), fmt(p.tokens_per_pass),
    fmt(Math.round(p.samples_per_pass)), el('span', { 'data-testid': 'passes-' + p.source }, p.passes.toFixed(2)),
    passStarts(p)]);
  return el('section', { 'data-testid': 'passes' }, title,
    table(['source', 'records', 'tokens/byte', 'tokens a pass', 'samples a pass', 'passes', 'next passes start'], rows));
}

// ---- Ablation: a group's runs as a grid of (recipe, lane binding) × world size

// The last reported value of metric `key` in a run's steps, or null.
function lastMetric(steps, key) {
  for (let i = steps.length - 1; i >= 0; i--) {
    const m = steps[i].metrics;
    if (m && typeof m[key] === 'number') return m[key];
  }
  return null;
}

// Every run of the group with what the grid shows: its recipe, binding and
// world size (first segment), its steps (metrics), its loss curve, and
// whether its batches equal those of its row's first cell.
async function ablationCells(group) {
  const { runs } = await api('/api/runs?group=' + encodeURIComponent(group));
  const cells = await Promise.all(runs.map(async (r) => {
    const q = encodeURIComponent(r.name);
    const [detail, page, series] = await Promise.all([api('/api/runs/' + q),
      api(`/api/runs/${q}/steps?from=${Math.max(1, (r.last_step || 1) - 9999)}&limit=10000`),
      api(`/api/runs/${q}/series?buckets=${chartWidth()}`)]);
    const first = detail.segments[0] || {};
    return { run: r.name, recipe: r.recipe_id, recipeName: r.recipe_name || short(r.recipe_id),
             binding: first.lane_binding || 'logical', world: first.world_size || r.world_size,
             steps: page.steps, series, heldout: lastMetric(page.steps, 'heldout_loss') };
  }));
  const rows = new Map();
  for (const c of cells) {
    const key = c.recipe + '\u0000' + c.binding;
    if (!rows.has(key)) rows.set(key, { recipe: c.recipe, recipeName: c.recipeName, binding: c.binding, cells: [] });
    rows.get(key).cells.push(c);
  }
  for (const row of rows.values()) {
    row.cells.sort((a, b) => a.world - b.world);
    const ref = row.cells[0];
    await Promise.all(row.cells.map(async (c) => {
      if (c === ref) { c.same = true; return; }
      const cmp = await api(`/api/compare?a=${encodeURIComponent(ref.run)}&b=${encodeURIComponent(c.run)}`);
      c.same = !cmp.diverged && cmp.steps_compared > 0 && cmp.only_a === 0 && cmp.only_b === 0;
      c.firstDivergent = cmp.first_divergent_step;
    }));
    const values = row.cells.map((c) => c.heldout).filter((v) => v != null);
    row.mean = values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
    row.spread = values.length ? Math.max(...values) - Math.min(...values) : null;
  }
  return [...rows.values()].sort((a, b) => (a.binding === b.binding ? 0 : a.binding === 'logical' ? -1 : 1));
}

// Effect (|recipe mean − first recipe's mean|) against the larger spread,
// on one scale: two bars, so the eye sees which is longer.
function effectBars(effect, spread, scale) {
  const bar = (value, kind, label) => el('div', { class: 'bar-line' },
    el('span', { class: 'bar-label' }, label),
    el('span', { class: 'bar ' + kind, style: `width: ${value == null || !scale ? 0 : Math.max(1, 160 * value / scale)}px` }),
    el('span', { class: 'bar-value' }, value == null ? '–' : value.toFixed(4)));
  return el('div', { class: 'bars' }, bar(effect, 'effect', 'effect'), bar(spread, 'spread', 'spread'));
}

async function viewAblation(params) {
  const group = params.get('group') || '';
  const input = el('input', { id: 'group-input', value: group, 'aria-label': 'group' });
  const form = el('form', { class: 'inline', onsubmit: (e) => {
    e.preventDefault();
    location.hash = '#/ablation?group=' + encodeURIComponent(input.value.trim());
  } }, el('label', {}, 'Group', input), el('button', { type: 'submit' }, 'Show grid'));
  if (!group) {
    const { runs } = await api('/api/runs');
    const groups = [...new Set(runs.map((r) => r.group).filter(Boolean))];
    main.replaceChildren(el('h1', {}, 'Ablation grid'), form, groups.length
      ? el('ul', {}, groups.map((g) => el('li', {}, el('a', { href: '#/ablation?group=' + encodeURIComponent(g) }, g))))
      : el('p', { class: 'muted' }, 'No run has a group yet.'));
    return;
  }
  let rows;
  try { rows = await ablationCells(group); } catch (error) { formError('Ablation grid', form, error); return; }
  if (!rows.length) { formError('Ablation grid', form, new Error(`no runs in group '${group}'`)); return; }
  const worlds = [...new Set(rows.flatMap((r) => r.cells.map((c) => c.world)))].sort((a, b) => a - b);
  const recipes = [...new Set(rows.map((r) => r.recipe))];
  // per binding: the first recipe's row mean is the reference of the effect
  const reference = new Map(rows.filter((r) => r.recipe === recipes[0]).map((r) => [r.binding, r]));
  const noise = new Map();
  for (const r of rows) noise.set(r.binding, Math.max(noise.get(r.binding) ?? 0, r.spread ?? 0));
  const effects = rows.map((r) => {
    const ref = reference.get(r.binding);
    return r.recipe === recipes[0] || !ref || ref.mean == null || r.mean == null ? null : Math.abs(r.mean - ref.mean);
  });
  const scale = Math.max(...rows.map((r) => r.spread ?? 0), ...effects.map((e) => e ?? 0));
  const cellView = (row, w) => {
    const c = row.cells.find((x) => x.world === w);
    if (!c) return el('span', { class: 'muted' }, '–');
    const ref = row.cells[0];
    return el('div', { 'data-testid': `cell-${c.run}`, 'data-heldout': String(c.heldout), 'data-same': String(c.same) },
      el('strong', {}, c.heldout == null ? '–' : c.heldout.toFixed(4)), ' ',
      c === ref ? [badge('match', 'reference'), ' ', runLink(c.run)]
        : [c.same ? badge('match', `same batches as W=${ref.world}`)
                  : badge('diverge', `differs from step ${fmt(c.firstDivergent)}`), ' ',
           el('a', { href: `#/compare?runs=${encodeURIComponent(ref.run)},${encodeURIComponent(c.run)}` }, 'compare')]);
  };
  const body = rows.map((row, i) => el('tr', { 'data-testid': 'ablation-row' },
    el('th', { scope: 'row' }, row.recipeName, ' ', el('span', { class: 'muted' }, row.binding === 'rank' ? 'rank-bound' : 'ordo lanes')),
    worlds.map((w) => el('td', {}, cellView(row, w))),
    el('td', { 'data-testid': 'spread' }, row.spread == null ? '–' : row.spread.toFixed(4)),
    el('td', {}, effects[i] == null ? el('span', { class: 'muted' }, 'reference recipe')
      : [effectBars(effects[i], noise.get(row.binding), scale),
         effects[i] > noise.get(row.binding) ? badge('match', 'effect exceeds the data-order spread')
                                             : badge('diverge', 'effect within the data-order spread')])));
  const grid = el('table', { 'data-testid': 'ablation-grid' },
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'recipe · loader'),
      worlds.map((w) => el('th', { scope: 'col' }, `W=${w}`)), el('th', { scope: 'col' }, 'spread over W'),
      el('th', { scope: 'col' }, 'recipe effect against the spread'))),
    el('tbody', {}, body));
  const view = [el('h1', {}, 'Ablation grid ', el('code', {}, group)), form,
    el('p', { class: 'muted' }, 'Final held-out loss (metric heldout_loss) of each run; spread = max − min over the world sizes of a row; recipe effect = difference of the row means from the first recipe’s, with the same loader.'),
    grid];
  const charts = [];
  rows.forEach((row, i) => {
    const box = el('div', { class: 'chart', 'data-testid': 'ablation-loss-' + i });
    view.push(el('h2', {}, `Loss: ${row.recipeName} · ${row.binding === 'rank' ? 'rank-bound' : 'ordo lanes'}`), box);
    charts.push(() => { if (row.cells.some((c) => c.series.buckets.some((b) => b.loss != null)))
      lineChart(box, 'loss', row.cells.map((c) => `W=${c.world}`), row.cells.map((c) => c.series)); });
    const keys = [...new Set(row.cells.flatMap((c) => c.steps.flatMap((s) => Object.keys(s.metrics || {}))))]
      .filter((k) => k.startsWith('loss/')).sort();
    if (keys.length) {
      const sourceBox = el('div', { class: 'chart', 'data-testid': 'ablation-source-loss-' + i });
      view.push(el('h3', {}, 'Per-source loss'), sourceBox);
      charts.push(() => metricChart(sourceBox, row.cells, keys));
    }
  });
  main.replaceChildren(...view);
  charts.forEach((draw) => draw());
}

// Metrics `keys` of every cell by step, one line per (cell, key).
function metricChart(box, cells, keys) {
  const xs = [...new Set(cells.flatMap((c) => c.steps.map((s) => s.step)))].sort((a, b) => a - b);
  const data = [xs];
  const opts = [{ label: 'step' }];
  cells.forEach((c, i) => keys.forEach((k, j) => {
    const byStep = new Map(c.steps.map((s) => [s.step, s.metrics ? s.metrics[k] : null]));
    data.push(xs.map((x) => byStep.get(x) ?? null));
    opts.push({ label: `W=${c.world} ${k.slice(5)}`, stroke: LINE_COLORS[j % LINE_COLORS.length], width: 1.25,
                dash: i ? [2 + 2 * i, 3] : undefined, points: { show: false } });
  }));
  box.plot = new uPlot({ width: chartWidth(), height: 240, series: opts, scales: { x: { time: false } },
                         axes: [stepAxis(), { label: 'loss' }] }, data, box);
}

// ---- Recovery: the manifest for a run, step and world size

// Which lanes each rank of the new world size takes; beyond 8 ranks the
// table is folded, so the manifest and its commands stay in view.
function rankLanes(rankLanesList) {
  const rows = table(['rank', 'lanes'], rankLanesList.map((lanes, r) => [r, lanes.join(', ')]));
  if (rankLanesList.length <= 8) return rows;
  return el('details', { 'data-testid': 'rank-lanes' },
    el('summary', {}, `Lanes of each of the ${fmt(rankLanesList.length)} ranks`), rows);
}

async function viewRecovery(params) {
  const run = params.get('run') || '', step = params.get('step') || '', world = params.get('world_size') || '';
  const inputs = { run: el('input', { value: run, 'aria-label': 'run', required: '' }),
                   step: el('input', { value: step, 'aria-label': 'checkpoint step', inputmode: 'numeric', placeholder: 'latest' }),
                   world: el('input', { value: world, 'aria-label': 'new world size', inputmode: 'numeric', required: '' }) };
  const form = el('form', { class: 'inline', onsubmit: (e) => {
    e.preventDefault();
    const q = new URLSearchParams({ run: inputs.run.value, world_size: inputs.world.value });
    if (inputs.step.value) q.set('step', inputs.step.value);
    location.hash = '#/recovery?' + q.toString();
  } }, el('label', {}, 'Run', inputs.run), el('label', {}, 'Checkpoint step', inputs.step),
    el('label', {}, 'World size', inputs.world), el('button', { type: 'submit' }, 'Show manifest'));
  if (!run || !world) { main.replaceChildren(el('h1', {}, 'Recovery manifest'), form); return; }
  const path = `/api/runs/${encodeURIComponent(run)}/recovery?world_size=${encodeURIComponent(world)}${step ? '&step=' + encodeURIComponent(step) : ''}`;
  let manifest;
  try { manifest = await api(path); }
  catch (error) { formError('Recovery manifest', form, error); return; }
  const text = JSON.stringify(manifest, null, 2);
  const curl = `curl -s ${token() ? "-H 'Authorization: Bearer $ORDO_TOKEN' " : ''}'${location.origin}${path}'`;
  const copy = el('button', { type: 'button', onclick: async () => {
    await navigator.clipboard.writeText(text).catch(() => {});
    copy.textContent = 'Copied';
  } }, 'Copy manifest');
  main.replaceChildren(el('h1', {}, 'Recovery manifest'), form,
    el('div', { class: 'summary' },
      el('div', {}, el('strong', {}, fmt(manifest.checkpoint_step)), 'checkpoint step'),
      el('div', {}, el('strong', {}, fmt(manifest.resume_at_step)), 'resume at step'),
      el('div', {}, el('strong', {}, `${manifest.lanes} / ${manifest.world_size}`), 'lanes / world size'),
      el('div', {}, el('strong', {}, fmt(manifest.expected.length)), 'expected digests')),
    rankLanes(manifest.rank_lanes),
    el('p', {}, 'Fetch it: ', el('code', {}, curl)),
    el('p', {}, 'Resume from it: ', el('code', {}, `ordo resume --manifest '${location.origin}${path}' --steps N`)),
    el('p', {}, copy, ' ', el('span', { class: 'muted' }, 'SHA-256 ', el('code', {}, manifest.sha256))),
    el('pre', {}, text));
}

route();
