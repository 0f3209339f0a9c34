// How the server is started (no `vscode` import: unit-tested by node --test).
//
// Order: `skillsLsp.server.command` (a full argument list) wins; else
// `skillsLsp.server.pythonPath`; else the active interpreter of the Python extension when it is
// installed; else `python3` (`python` on Windows). A Python is run as
// `<python> -m skills_lsp serve`. No `--stdio` is appended (the extension never sets
// `transport: TransportKind.stdio`, which would); the server speaks stdio by default.

import { execFile } from 'node:child_process';
import * as path from 'node:path';

import { MODULE_NAME, PYPI_NAME } from './ids';

export type Platform = string; // NodeJS.Platform: 'linux', 'darwin', 'win32', ...

export interface LaunchSettings {
  /** `skillsLsp.server.command`: the whole command line as a list; [] when unset. */
  readonly command: readonly string[];
  /** `skillsLsp.server.pythonPath`; '' when unset. */
  readonly pythonPath: string;
}

export interface ExpandContext {
  /** The first workspace folder's file-system path, if any. */
  readonly workspaceFolder?: string;
  readonly userHome: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly platform: Platform;
}

export type LaunchSource = 'server.command' | 'server.pythonPath' | 'python-extension' | 'default';

export interface Launch {
  /** The executable to spawn. */
  readonly command: string;
  readonly args: readonly string[];
  /**
   * The Python (argv prefix) that runs `-m skills_lsp`, when known: probed before starting and
   * used in the `pip install` hint. Undefined for a custom command that is not `... -m skills_lsp`.
   */
  readonly python?: readonly string[];
  readonly source: LaunchSource;
}

export const SERVE_ARGS: readonly string[] = ['-m', MODULE_NAME, 'serve'];

export function defaultPython(platform: Platform): string {
  return platform === 'win32' ? 'python' : 'python3';
}

/** `skillsLsp.server` as VS Code gives it -> LaunchSettings (wrong types count as unset). */
export function readLaunchSettings(server: unknown): LaunchSettings {
  const raw = typeof server === 'object' && server !== null ? (server as Record<string, unknown>) : {};
  let command: string[] = [];
  if (Array.isArray(raw.command) && raw.command.every((a) => typeof a === 'string')) {
    command = raw.command as string[];
  } else if (typeof raw.command === 'string' && raw.command.trim()) {
    command = [raw.command.trim()]; // a lone string: an executable, no arguments
  }
  while (command.length > 0 && !command[0]!.trim()) {
    command = command.slice(1);
  }
  const pythonPath = typeof raw.pythonPath === 'string' ? raw.pythonPath.trim() : '';
  return { command, pythonPath };
}

/**
 * Expands `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`. Unknown
 * variables, and `${workspaceFolder}` without a folder, are left as written.
 */
export function expandVariables(value: string, ctx: ExpandContext): string {
  let out = value.replace(/\$\{([^}]+)\}/g, (whole, name: string) => {
    if (name === 'workspaceFolder') {
      return ctx.workspaceFolder ?? whole;
    }
    if (name === 'userHome') {
      return ctx.userHome;
    }
    if (name.startsWith('env:')) {
      return ctx.env[name.slice(4)] ?? '';
    }
    return whole;
  });
  if (out === '~' || out.startsWith('~/') || (ctx.platform === 'win32' && out.startsWith('~\\'))) {
    out = ctx.userHome + out.slice(1);
  }
  return out;
}

function pathApi(platform: Platform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

/**
 * An executable as written in a setting: variables expanded; a relative path with a directory
 * part (`.venv/bin/python`) taken from the workspace folder; a bare name (`python3.12`) left for
 * a PATH lookup.
 */
export function resolveExecutable(value: string, ctx: ExpandContext): string {
  const expanded = expandVariables(value, ctx);
  const p = pathApi(ctx.platform);
  const hasDirectory = ctx.platform === 'win32' ? /[\\/]/.test(expanded) : expanded.includes('/');
  if (hasDirectory && !p.isAbsolute(expanded) && ctx.workspaceFolder) {
    return p.join(ctx.workspaceFolder, expanded);
  }
  return expanded;
}

/** The Python in a custom command of the form `[...python, '-m', 'skills_lsp', ...]`. */
export function pythonOfCommand(command: readonly string[]): string[] | undefined {
  for (let i = 1; i + 1 < command.length; i++) {
    if (command[i] === '-m' && command[i + 1] === MODULE_NAME) {
      return command.slice(0, i);
    }
  }
  return undefined;
}

export interface ResolveInputs {
  readonly settings: LaunchSettings;
  /** The Python extension's active interpreter (argv prefix), if that extension gave one. */
  readonly pythonFromExtension?: readonly string[];
  readonly ctx: ExpandContext;
}

export function resolveLaunch({ settings, pythonFromExtension, ctx }: ResolveInputs): Launch {
  if (settings.command.length > 0) {
    const [first, ...rest] = settings.command;
    const command = [resolveExecutable(first!, ctx), ...rest.map((a) => expandVariables(a, ctx))];
    return {
      command: command[0]!,
      args: command.slice(1),
      python: pythonOfCommand(command),
      source: 'server.command',
    };
  }
  let python: string[];
  let source: LaunchSource;
  if (settings.pythonPath) {
    python = [resolveExecutable(settings.pythonPath, ctx)];
    source = 'server.pythonPath';
  } else if (pythonFromExtension && pythonFromExtension.length > 0 && pythonFromExtension[0]) {
    python = [...pythonFromExtension];
    source = 'python-extension';
  } else {
    python = [defaultPython(ctx.platform)];
    source = 'default';
  }
  return { command: python[0]!, args: [...python.slice(1), ...SERVE_ARGS], python, source };
}

const SAFE_ARG = /^[A-Za-z0-9_@%+=:,./\\-]+$/;

/** An argument as the user's shell wants it (POSIX sh, or PowerShell / cmd on Windows). */
export function shellQuote(arg: string, platform: Platform): string {
  if (arg && SAFE_ARG.test(arg) && !(platform !== 'win32' && arg.includes('\\'))) {
    return arg;
  }
  if (platform === 'win32') {
    return `"${arg.replace(/"/g, '""')}"`;
  }
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The exact command that installs the server for this Python. */
export function pipInstallCommand(
  python: readonly string[],
  platform: Platform,
  upgrade = false,
): string {
  const quoted = python.map((a) => shellQuote(a, platform));
  // PowerShell (VS Code's default Windows terminal) runs a quoted path only after `&`.
  const call = platform === 'win32' && quoted[0]!.startsWith('"') ? `& ${quoted.join(' ')}` : quoted.join(' ');
  return `${call} -m pip install ${upgrade ? '--upgrade ' : ''}${PYPI_NAME}`;
}

/** A command line for the log. */
export function describeLaunch(launch: Launch, platform: Platform): string {
  return [launch.command, ...launch.args].map((a) => shellQuote(a, platform)).join(' ');
}

// --- the probe: can this Python import skills_lsp? --------------------------------------------

export const MIN_PYTHON: readonly [number, number] = [3, 10];

/** Exits 3 on a too-old Python, 1 (ModuleNotFoundError) without skills_lsp; prints its version. */
export const PROBE_SCRIPT = [
  'import sys',
  `if sys.version_info < (${MIN_PYTHON[0]}, ${MIN_PYTHON[1]}):`,
  `    sys.stderr.write("skills-lsp needs Python ${MIN_PYTHON[0]}.${MIN_PYTHON[1]}+, this is %d.%d\\n" % sys.version_info[:2])`,
  '    sys.exit(3)',
  `import ${MODULE_NAME}`,
  `print(getattr(${MODULE_NAME}, "__version__", "?"), "%d.%d.%d" % sys.version_info[:3], sys.executable)`,
].join('\n');

export function probeCommand(python: readonly string[]): { command: string; args: string[] } {
  return { command: python[0]!, args: [...python.slice(1), '-c', PROBE_SCRIPT] };
}

export type ProbeOutcome =
  | { kind: 'ok'; version: string; pythonVersion: string; executable: string }
  | { kind: 'python-missing'; detail: string }
  | { kind: 'python-too-old'; detail: string }
  | { kind: 'module-missing'; detail: string }
  | { kind: 'import-failed'; detail: string }
  | { kind: 'timeout'; detail: string };

export interface ProbeResult {
  /** A spawn error code (`ENOENT`, `EACCES`), if the process could not start. */
  readonly errorCode?: string;
  readonly errorMessage?: string;
  /** The exit code; null when killed. */
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  return lines[lines.length - 1] ?? '';
}

export function classifyProbe(result: ProbeResult): ProbeOutcome {
  if (result.errorCode === 'ENOENT' || result.errorCode === 'EACCES' || result.errorCode === 'ENOTDIR') {
    return { kind: 'python-missing', detail: result.errorMessage ?? result.errorCode };
  }
  if (result.timedOut) {
    return { kind: 'timeout', detail: 'the Python did not answer in time' };
  }
  if (result.exitCode === 0) {
    const [version = '?', pythonVersion = '?', ...exe] = lastLine(result.stdout).split(' ');
    return { kind: 'ok', version, pythonVersion, executable: exe.join(' ') };
  }
  const detail = lastLine(result.stderr) || result.errorMessage || `exit code ${result.exitCode}`;
  if (result.exitCode === 3 && /needs Python/.test(result.stderr)) {
    return { kind: 'python-too-old', detail };
  }
  if (new RegExp(`No module named '?${MODULE_NAME}'?\\s*$`, 'm').test(result.stderr)) {
    return { kind: 'module-missing', detail };
  }
  // Windows: the Microsoft Store alias for python.exe prints this and exits 9009.
  if (result.exitCode === 9009 || /was not found; run without arguments to install/.test(result.stderr)) {
    return { kind: 'python-missing', detail };
  }
  return { kind: 'import-failed', detail };
}

export interface ProbeOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
}

/** Runs `<python> -c PROBE_SCRIPT` and classifies the result. Never rejects. */
export function runProbe(python: readonly string[], options: ProbeOptions = {}): Promise<ProbeOutcome> {
  const { command, args } = probeCommand(python);
  return new Promise((resolve) => {
    try {
      execFile(
        command,
        args,
        {
          cwd: options.cwd,
          env: options.env,
          timeout: options.timeoutMs ?? 20_000,
          windowsHide: true,
          encoding: 'utf8',
        },
        (error, stdout, stderr) => {
          const err = error as (NodeJS.ErrnoException & { killed?: boolean; signal?: string }) | null;
          const code = err && typeof err.code === 'string' ? err.code : undefined;
          const exitCode = err ? (typeof err.code === 'number' ? err.code : null) : 0;
          resolve(
            classifyProbe({
              errorCode: code,
              errorMessage: err?.message,
              exitCode,
              timedOut: Boolean(err?.killed && !code && exitCode === null),
              stdout: String(stdout ?? ''),
              stderr: String(stderr ?? ''),
            }),
          );
        },
      );
    } catch (error) {
      // execFile throws synchronously for some invalid arguments (e.g. a NUL in the path).
      resolve({ kind: 'python-missing', detail: String(error) });
    }
  });
}

// --- the Python extension ----------------------------------------------------------------------

function fsPathOf(uri: unknown): string | undefined {
  const fsPath = (uri as { fsPath?: unknown } | undefined)?.fsPath;
  return typeof fsPath === 'string' && fsPath ? fsPath : undefined;
}

/**
 * The active interpreter from the Python extension's API (the object `activate()` resolves to),
 * as an argv prefix: `environments.getActiveEnvironmentPath` + `resolveEnvironment` when present,
 * else the older `settings.getExecutionDetails(resource).execCommand`. Undefined when the API
 * gives nothing usable; never throws.
 */
export async function interpreterFromPythonApi(
  api: unknown,
  resource?: unknown,
): Promise<string[] | undefined> {
  const a = api as
    | {
        environments?: {
          getActiveEnvironmentPath?: (resource?: unknown) => unknown;
          resolveEnvironment?: (env: unknown) => unknown;
        };
        settings?: { getExecutionDetails?: (resource?: unknown) => unknown };
      }
    | undefined;
  try {
    const envs = a?.environments;
    if (envs && typeof envs.getActiveEnvironmentPath === 'function') {
      const active = (await envs.getActiveEnvironmentPath(resource)) as { path?: unknown } | undefined;
      if (active) {
        if (typeof envs.resolveEnvironment === 'function') {
          const resolved = (await envs.resolveEnvironment(active)) as
            | { executable?: { uri?: unknown } }
            | undefined;
          if (resolved) {
            const exe = fsPathOf(resolved.executable?.uri);
            // An environment without a Python (an empty conda env): nothing to run.
            return exe ? [exe] : undefined;
          }
        }
        if (typeof active.path === 'string' && active.path) {
          return [active.path];
        }
      }
    }
  } catch {
    // fall through to the older API
  }
  try {
    const getDetails = a?.settings?.getExecutionDetails;
    if (typeof getDetails === 'function') {
      const details = (await getDetails(resource)) as { execCommand?: unknown } | undefined;
      const cmd = details?.execCommand;
      if (Array.isArray(cmd) && cmd.length > 0 && cmd.every((c) => typeof c === 'string' && c)) {
        return [...(cmd as string[])];
      }
    }
  } catch {
    // no usable API
  }
  return undefined;
}

/**
 * The server's working directory: the first workspace folder when the workspace is trusted.
 * `python -m` puts the working directory first on `sys.path`, so in an untrusted workspace a
 * folder named `skills_lsp` there would run instead of the installed server: use `fallback`.
 */
export function workingDirectory(opts: {
  trusted: boolean;
  workspaceFolder?: string;
  fallback: string;
}): string {
  return opts.trusted && opts.workspaceFolder ? opts.workspaceFolder : opts.fallback;
}
