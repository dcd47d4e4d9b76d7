// Shared by run.js and f16_error.js: the static file server over the repo root,
// the Chromium launch flags, the common options, launching and closing one
// browser, one run of a bench page in it, logging.
'use strict';

const fs = require('fs');
const http = require('http');
const path = require('path');
const {execFileSync} = require('child_process');
const puppeteer = require('puppeteer-core');

const REPO = path.resolve(__dirname, '..', '..');
const CHROMIUM_ARGS = [
  '--headless=new',
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
  '--ignore-gpu-blocklist',
  '--no-sandbox',
];

// Static file server over the repo root (models + node_modules + pages).
// Note: no Cache-Control: no-store (README.md says why).
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript',
  '.json': 'application/json', '.bin': 'application/octet-stream',
};
function startServer() {
  const server = http.createServer((req, res) => {
    if (req.url === '/favicon.ico') { res.writeHead(204); res.end(); return; }
    let rel;
    try { rel = decodeURIComponent(new URL(req.url, 'http://x').pathname); } catch (e) {
      res.writeHead(400); res.end(); return;
    }
    const file = path.resolve(REPO, '.' + rel);
    if (file !== REPO && !file.startsWith(REPO + path.sep)) { res.writeHead(403); res.end(); return; }
    fs.stat(file, (err, st) => {
      if (err || !st.isFile()) { res.writeHead(404); res.end('not found'); return; }
      res.writeHead(200, {
        'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream',
        'Content-Length': st.size,
      });
      fs.createReadStream(file).pipe(res);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

// The options both commands take: --chromium PATH, --timeout-min N, --json PATH,
// -h/--help (prints the head comment of FILE, the command), and each of NUMBERS
// (such as '--seed': o.seed, a number). DEFAULTS: the command's timeoutMin, json and
// NUMBERS' values. Other words: o.words.
function parseArgs(argv, file, defaults, numbers = []) {
  const o = Object.assign({chromium: '/usr/bin/chromium'}, defaults, {words: []});
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--chromium') o.chromium = argv[++i];
    else if (a === '--timeout-min') o.timeoutMin = Number(argv[++i]);
    else if (a === '--json') o.json = path.resolve(argv[++i]);
    else if (numbers.includes(a)) o[a.slice(2)] = Number(argv[++i]);
    else if (a === '-h' || a === '--help') {
      process.stdout.write(fs.readFileSync(file, 'utf8').split('\n').slice(1, 14)
        .map((l) => l.replace(/^\/\/ ?/, '')).join('\n') + '\n');
      process.exit(0);
    } else if (a.startsWith('--')) throw new Error('unknown option ' + a);
    else o.words.push(a);
  }
  if (!(o.timeoutMin > 0)) throw new Error('bad --timeout-min');
  return o;
}

function log(msg) { process.stderr.write(`[${new Date().toISOString()}] ${msg}\n`); }

// A fresh headless Chromium (WebGL on SwiftShader). timeoutMin: the row's cap.
function launchBrowser(chromium, timeoutMin) {
  return puppeteer.launch({
    executablePath: chromium,
    headless: false,  // the headless flag is passed explicitly in args
    args: CHROMIUM_ARGS,
    protocolTimeout: (timeoutMin * 60 + 120) * 1000,
    timeout: 120000,
  });
}

// Closes the browser; SIGKILLs it if it has not gone within 15 s.
// Returns {closeMs, killed}.
async function closeBrowser(browser) {
  const tc = Date.now();
  const proc = browser.process();
  let killed = false, timer = null;
  const closed = await Promise.race([
    browser.close().then(() => true, () => false),
    new Promise((r) => { timer = setTimeout(() => r(false), 15000); }),
  ]);
  clearTimeout(timer);  // else it holds the process 15 s after the last row
  if (!closed && proc && proc.exitCode === null) {
    try { proc.kill('SIGKILL'); } catch (e) { /* already gone */ }
    killed = true;
  }
  return {closeMs: Date.now() - tc, killed};
}

const errText = (e) => String(e && e.message || e);

// One run of a bench page in a fresh browser: launches Chromium, opens URL, waits
// for window.__benchReady, then races the page's window[FN](ARG) against the cap
// (opts.timeoutMin) and a crash of the page or the browser. Phase markers (page_util.js's
// phase()) are logged as `TAG: NAME (+s)` and passed to onPhase(NAME, ms since the
// start); other console messages (the first maxConsole, cut to consoleChars) and page
// errors go to rec.console and rec.pageErrors. onPage(page, browser), if given, runs
// before the page loads: the caller's own records and handlers.
// Returns {result: what FN returned (null if it did not), outcome: 'ok' or what failed
// and in which phase, phase: the last phase reached, error: the message of an exception
// that stopped the run (else undefined), runMs: time before the browser was closed,
// closed: closeBrowser's answer (null without a browser)}.
async function runPage(opts, {url, fn, arg, tag, rec, maxConsole, consoleChars, onPhase, onPage}) {
  const t0 = Date.now();
  const res = {result: null};
  let browser = null, timer = null, phase = 'launch', crashed = null;
  try {
    browser = await launchBrowser(opts.chromium, opts.timeoutMin);
    const page = await browser.newPage();
    page.on('console', (m) => {
      const text = m.text();
      const pm = /^\[bench\] phase=(\S+)/.exec(text);
      if (pm) {
        phase = pm[1];
        if (onPhase) onPhase(phase, Date.now() - t0);
        log(`  ${tag}: ${phase} (+${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      } else if (rec.console.length < maxConsole) {
        rec.console.push({type: m.type(), text: text.slice(0, consoleChars)});
      }
    });
    page.on('pageerror', (e) => { rec.pageErrors.push(errText(e)); });
    const crash = new Promise((resolve) => {
      page.on('error', (e) => { crashed = 'page crashed: ' + errText(e); resolve(); });
      browser.on('disconnected', () => { if (!crashed) crashed = 'browser disconnected'; resolve(); });
    });
    if (onPage) await onPage(page, browser);
    phase = 'page-load';
    await page.goto(url, {waitUntil: 'load'});
    await page.waitForFunction('window.__benchReady === true', {timeout: 60000});
    const timeout = new Promise((resolve) => { timer = setTimeout(resolve, opts.timeoutMin * 60000); });
    const work = page.evaluate((f, a) => window[f](a), fn, arg);
    work.catch(() => {});
    const w = await Promise.race([
      work.then((r) => ({kind: 'done', r}), (e) => ({kind: 'error', e})),
      timeout.then(() => ({kind: 'timeout'})),
      crash.then(() => ({kind: 'crash'})),
    ]);
    if (w.kind === 'done') {
      res.result = w.r;
      res.outcome = w.r.ok ? 'ok' : `failed in ${w.r.failedPhase}: ${w.r.error}`;
    } else if (w.kind === 'timeout') res.outcome = `timeout after ${opts.timeoutMin} min (in ${phase})`;
    else if (w.kind === 'crash') res.outcome = `${crashed} (in ${phase})`;
    else {
      res.error = errText(w.e);
      res.outcome = `evaluate failed in ${phase}: ${res.error}`;
    }
  } catch (e) {
    res.error = errText(e);
    res.outcome = `harness error in ${phase}: ${res.error}`;
  } finally {
    if (timer) clearTimeout(timer);
    res.phase = phase;
    res.runMs = Date.now() - t0;
    res.closed = browser ? await closeBrowser(browser) : null;
  }
  return res;
}

function chromiumVersion(chromium) {
  try {
    return execFileSync(chromium, ['--version'], {encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']}).trim();
  } catch (e) { return 'unknown: ' + e.message; }
}

function tfjsVersions() {
  const v = {};
  for (const p of ['tfjs-core', 'tfjs-converter', 'tfjs-backend-webgl']) {
    v[p] = require(`@tensorflow/${p}/package.json`).version;
  }
  return v;
}

module.exports = {
  REPO, CHROMIUM_ARGS, startServer, parseArgs, log, runPage, chromiumVersion, tfjsVersions,
};
