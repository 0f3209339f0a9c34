import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';

import {
  classifyProbe,
  describeLaunch,
  type ExpandContext,
  expandVariables,
  interpreterFromPythonApi,
  pipInstallCommand,
  probeCommand,
  PROBE_SCRIPT,
  pythonOfCommand,
  readLaunchSettings,
  resolveLaunch,
  runProbe,
  shellQuote,
  workingDirectory,
} from '../launch';

const linux: ExpandContext = {
  workspaceFolder: '/work/repo',
  userHome: '/home/ann',
  env: { VENV: '/opt/venv' },
  platform: 'linux',
};
const windows: ExpandContext = {
  workspaceFolder: 'C:\\work\\repo',
  userHome: 'C:\\Users\\ann',
  env: {},
  platform: 'win32',
};
const unset = { command: [], pythonPath: '' };

describe('resolveLaunch', () => {
  test('server.command wins over everything, verbatim, no --stdio', () => {
    const launch = resolveLaunch({
      settings: { command: ['uvx', 'skills-lsp', 'serve'], pythonPath: '/usr/bin/python3.12' },
      pythonFromExtension: ['/env/bin/python'],
      ctx: linux,
    });
    assert.deepEqual(launch, {
      command: 'uvx',
      args: ['skills-lsp', 'serve'],
      python: undefined,
      source: 'server.command',
    });
  });

  test('server.command of the form python -m skills_lsp is probed with that python', () => {
    const launch = resolveLaunch({
      settings: { command: ['${workspaceFolder}/.venv/bin/python', '-m', 'skills_lsp', 'serve', '--log-file', '~/x.log'], pythonPath: '' },
      ctx: linux,
    });
    assert.equal(launch.command, '/work/repo/.venv/bin/python');
    assert.deepEqual(launch.args, ['-m', 'skills_lsp', 'serve', '--log-file', '/home/ann/x.log']);
    assert.deepEqual(launch.python, ['/work/repo/.venv/bin/python']);
  });

  test('server.pythonPath runs -m skills_lsp serve', () => {
    const launch = resolveLaunch({
      settings: { command: [], pythonPath: '/usr/bin/python3.12' },
      pythonFromExtension: ['/env/bin/python'],
      ctx: linux,
    });
    assert.deepEqual(launch, {
      command: '/usr/bin/python3.12',
      args: ['-m', 'skills_lsp', 'serve'],
      python: ['/usr/bin/python3.12'],
      source: 'server.pythonPath',
    });
  });

  test('a relative pythonPath is taken from the workspace folder; a bare name from PATH', () => {
    assert.equal(
      resolveLaunch({ settings: { command: [], pythonPath: '.venv/bin/python' }, ctx: linux }).command,
      '/work/repo/.venv/bin/python',
    );
    assert.equal(
      resolveLaunch({ settings: { command: [], pythonPath: 'python3.12' }, ctx: linux }).command,
      'python3.12',
    );
    assert.equal(
      resolveLaunch({ settings: { command: [], pythonPath: '.venv\\Scripts\\python.exe' }, ctx: windows }).command,
      'C:\\work\\repo\\.venv\\Scripts\\python.exe',
    );
  });

  test('then the Python extension, including a multi-word exec command', () => {
    const one = resolveLaunch({ settings: unset, pythonFromExtension: ['/env/bin/python'], ctx: linux });
    assert.deepEqual([one.command, ...one.args], ['/env/bin/python', '-m', 'skills_lsp', 'serve']);
    assert.equal(one.source, 'python-extension');
    const conda = resolveLaunch({
      settings: unset,
      pythonFromExtension: ['conda', 'run', '-n', 'skills', 'python'],
      ctx: linux,
    });
    assert.deepEqual(
      [conda.command, ...conda.args],
      ['conda', 'run', '-n', 'skills', 'python', '-m', 'skills_lsp', 'serve'],
    );
    assert.deepEqual(conda.python, ['conda', 'run', '-n', 'skills', 'python']);
  });

  test('else python3 (python on Windows)', () => {
    const launch = resolveLaunch({ settings: unset, pythonFromExtension: [], ctx: linux });
    assert.deepEqual([launch.command, ...launch.args], ['python3', '-m', 'skills_lsp', 'serve']);
    assert.equal(launch.source, 'default');
    assert.equal(resolveLaunch({ settings: unset, ctx: windows }).command, 'python');
  });

  test('never appends --stdio', () => {
    for (const settings of [unset, { command: [], pythonPath: 'py' }, { command: ['skills-lsp', 'serve'], pythonPath: '' }]) {
      assert.ok(!resolveLaunch({ settings, ctx: linux }).args.includes('--stdio'));
    }
  });
});

describe('readLaunchSettings', () => {
  test('reads the skillsLsp.server object; wrong types count as unset', () => {
    assert.deepEqual(readLaunchSettings({ command: ['a', 'b'], pythonPath: ' /p ' }), { command: ['a', 'b'], pythonPath: '/p' });
    assert.deepEqual(readLaunchSettings({ command: [1, 2], pythonPath: 3 }), unset);
    assert.deepEqual(readLaunchSettings(undefined), unset);
    assert.deepEqual(readLaunchSettings({ command: 'skills-lsp' }), { command: ['skills-lsp'], pythonPath: '' });
    assert.deepEqual(readLaunchSettings({ command: ['', 'x'] }), { command: ['x'], pythonPath: '' });
  });
});

describe('expandVariables', () => {
  test('workspaceFolder, userHome, env and ~', () => {
    assert.equal(expandVariables('${workspaceFolder}/a', linux), '/work/repo/a');
    assert.equal(expandVariables('${userHome}/a', linux), '/home/ann/a');
    assert.equal(expandVariables('${env:VENV}/bin/python', linux), '/opt/venv/bin/python');
    assert.equal(expandVariables('${env:NOPE}x', linux), 'x');
    assert.equal(expandVariables('~/venv/bin/python', linux), '/home/ann/venv/bin/python');
    assert.equal(expandVariables('~ann/x', linux), '~ann/x');
    assert.equal(expandVariables('${unknown}', linux), '${unknown}');
    assert.equal(expandVariables('${workspaceFolder}/a', { ...linux, workspaceFolder: undefined }), '${workspaceFolder}/a');
  });
});

describe('pythonOfCommand', () => {
  test('finds the python before -m skills_lsp', () => {
    assert.deepEqual(pythonOfCommand(['py', '-3.12', '-m', 'skills_lsp', 'serve']), ['py', '-3.12']);
    assert.equal(pythonOfCommand(['skills-lsp', 'serve']), undefined);
    assert.equal(pythonOfCommand(['-m', 'skills_lsp']), undefined);
  });
});

describe('pip install hint', () => {
  test('the exact command for the interpreter', () => {
    assert.equal(pipInstallCommand(['python3'], 'linux'), 'python3 -m pip install skills-lsp');
    assert.equal(
      pipInstallCommand(['/home/ann/my venv/bin/python'], 'linux'),
      "'/home/ann/my venv/bin/python' -m pip install skills-lsp",
    );
    assert.equal(
      pipInstallCommand(['C:\\Program Files\\Python312\\python.exe'], 'win32'),
      '& "C:\\Program Files\\Python312\\python.exe" -m pip install skills-lsp',
    );
    assert.equal(pipInstallCommand(['C:\\Python312\\python.exe'], 'win32'), 'C:\\Python312\\python.exe -m pip install skills-lsp');
    assert.equal(pipInstallCommand(['python3'], 'linux', true), 'python3 -m pip install --upgrade skills-lsp');
  });

  test('shellQuote', () => {
    assert.equal(shellQuote("it's", 'linux'), `'it'\\''s'`);
    assert.equal(shellQuote('', 'linux'), "''");
    assert.equal(shellQuote('a\\b', 'linux'), "'a\\b'");
    assert.equal(shellQuote('a"b c', 'win32'), '"a""b c"');
  });

  test('describeLaunch', () => {
    const launch = resolveLaunch({ settings: { command: [], pythonPath: '/a b/python' }, ctx: linux });
    assert.equal(describeLaunch(launch, 'linux'), "'/a b/python' -m skills_lsp serve");
  });
});

describe('the probe', () => {
  test('runs the python with -c and the probe script', () => {
    assert.deepEqual(probeCommand(['py', '-3']), { command: 'py', args: ['-3', '-c', PROBE_SCRIPT] });
    assert.match(PROBE_SCRIPT, /^import skills_lsp$/m);
  });

  const base = { exitCode: 1, timedOut: false, stdout: '', stderr: '' };

  test('classifies a missing module', () => {
    const stderr = 'Traceback (most recent call last):\n  File "<string>", line 5, in <module>\nModuleNotFoundError: No module named \'skills_lsp\'\n';
    assert.equal(classifyProbe({ ...base, stderr }).kind, 'module-missing');
    assert.equal(classifyProbe({ ...base, stderr: 'ImportError: No module named skills_lsp' }).kind, 'module-missing');
  });

  test('a missing dependency is an import failure, not a missing module', () => {
    const outcome = classifyProbe({ ...base, stderr: "ModuleNotFoundError: No module named 'pygls'\n" });
    assert.deepEqual(outcome, { kind: 'import-failed', detail: "ModuleNotFoundError: No module named 'pygls'" });
  });

  test('classifies a missing python, an old python, a timeout and success', () => {
    assert.equal(classifyProbe({ ...base, exitCode: null, errorCode: 'ENOENT', errorMessage: 'spawn x ENOENT' }).kind, 'python-missing');
    assert.equal(classifyProbe({ ...base, exitCode: 9009 }).kind, 'python-missing');
    assert.equal(classifyProbe({ ...base, exitCode: 3, stderr: 'skills-lsp needs Python 3.10+, this is 3.8\n' }).kind, 'python-too-old');
    assert.equal(classifyProbe({ ...base, exitCode: null, timedOut: true }).kind, 'timeout');
    assert.deepEqual(classifyProbe({ ...base, exitCode: 0, stdout: '0.1.0 3.12.3 /usr/bin/python3\n' }), {
      kind: 'ok',
      version: '0.1.0',
      pythonVersion: '3.12.3',
      executable: '/usr/bin/python3',
    });
  });

  test('runProbe reports a python that does not exist', async () => {
    const outcome = await runProbe(['/nonexistent/dir/python3'], { timeoutMs: 5000 });
    assert.equal(outcome.kind, 'python-missing');
  });

  test('runProbe runs a real interpreter (node standing in for python) and reads its exit', async () => {
    // `node -c` is `--check`, which fails on the script path: an import failure of sorts.
    const outcome = await runProbe([process.execPath], { timeoutMs: 10000 });
    assert.ok(['import-failed', 'module-missing'].includes(outcome.kind), outcome.kind);
  });

  const python = process.platform === 'win32' ? 'python' : 'python3';
  const hasPython = spawnSync(python, ['--version']).status === 0;
  test('runProbe with a real Python: installed, missing or too old, never confused', { skip: !hasPython && `no ${python}` }, async () => {
    const outcome = await runProbe([python], { timeoutMs: 20000 });
    assert.ok(['ok', 'module-missing', 'python-too-old'].includes(outcome.kind), JSON.stringify(outcome));
    // -S -I: no site-packages, so skills_lsp cannot be found: the real ModuleNotFoundError text.
    const isolated = await runProbe([python, '-S', '-I'], { timeoutMs: 20000 });
    assert.ok(['module-missing', 'python-too-old'].includes(isolated.kind), JSON.stringify(isolated));
  });
});

describe('interpreterFromPythonApi', () => {
  const uri = (fsPath: string) => ({ fsPath });

  test('environments API: the resolved executable', async () => {
    const api = {
      environments: {
        getActiveEnvironmentPath: () => ({ id: 'x', path: '/env' }),
        resolveEnvironment: async (env: { path: string }) => ({ executable: { uri: uri(`${env.path}/bin/python`) } }),
      },
    };
    assert.deepEqual(await interpreterFromPythonApi(api), ['/env/bin/python']);
  });

  test('an environment without a Python gives nothing', async () => {
    const api = {
      environments: {
        getActiveEnvironmentPath: () => ({ id: 'x', path: '/conda/envs/empty' }),
        resolveEnvironment: async () => ({ executable: { uri: undefined } }),
      },
    };
    assert.equal(await interpreterFromPythonApi(api), undefined);
  });

  test('no resolveEnvironment: the active path; unresolvable: the older settings API', async () => {
    assert.deepEqual(
      await interpreterFromPythonApi({ environments: { getActiveEnvironmentPath: () => ({ path: '/usr/bin/python3' }) } }),
      ['/usr/bin/python3'],
    );
    const api = {
      environments: {
        getActiveEnvironmentPath: () => {
          throw new Error('boom');
        },
      },
      settings: { getExecutionDetails: () => ({ execCommand: ['conda', 'run', '-n', 'x', 'python'] }) },
    };
    assert.deepEqual(await interpreterFromPythonApi(api), ['conda', 'run', '-n', 'x', 'python']);
  });

  test('nothing usable: undefined, never a throw', async () => {
    assert.equal(await interpreterFromPythonApi(undefined), undefined);
    assert.equal(await interpreterFromPythonApi({}), undefined);
    assert.equal(await interpreterFromPythonApi({ settings: { getExecutionDetails: () => ({ execCommand: undefined }) } }), undefined);
  });
});

describe('workingDirectory', () => {
  test('the workspace folder only when trusted', () => {
    assert.equal(workingDirectory({ trusted: true, workspaceFolder: '/w', fallback: '/ext' }), '/w');
    assert.equal(workingDirectory({ trusted: false, workspaceFolder: '/w', fallback: '/ext' }), '/ext');
    assert.equal(workingDirectory({ trusted: true, fallback: '/ext' }), '/ext');
  });
});
