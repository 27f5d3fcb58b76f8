// Time for the dashboard's compare view of two 1,000,000-step runs to
// render in headless Chromium (from navigation to the charts drawn),
// median of 5. Usage: node dashboard.mjs NODE_MODULES BASE_URL A B
import path from 'node:path';
import { createRequire } from 'node:module';

const [modules, base, a, b] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(modules), 'x.js'));
const { chromium } = require('playwright-core');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
                                        args: ['--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
const times = [];
for (let i = 0; i < 5; i++) {
  await page.goto('about:blank');
  const start = Date.now();
  await page.goto(`${base}/#/compare?runs=${a},${b}`);
  await page.waitForSelector('[data-testid=first-divergent-step]');
  await page.waitForSelector('main .uplot');
  times.push((Date.now() - start) / 1000);
}
await browser.close();
times.sort((x, y) => x - y);
console.log(`dashboard compare of ${a} and ${b}: ${times.map((t) => t.toFixed(2)).join(' ')} s; median ${times[2].toFixed(2)} s`);
