// Saves a screenshot of one dashboard view once it has rendered; fails on
// console errors. Usage: node shot.mjs NODE_MODULES URL HASH OUT.png
import path from 'node:path';
import { createRequire } from 'node:module';

const [modules, base, hash, out] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(modules), 'x.js'));
const { chromium } = require('playwright-core');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
                                        args: ['--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
const problems = [];
page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
page.on('pageerror', (e) => problems.push(e.message));
await page.goto(base + '/' + hash);
await page.waitForFunction(() => !document.querySelector('main').textContent.startsWith('Loading'));
await page.waitForSelector('main .uplot, main .error');
await page.screenshot({ path: out, fullPage: true });
const error = await page.$('main .error');
await browser.close();
if (error || problems.length) {
  console.error('view failed:', problems.join('; '));
  process.exit(1);
}
