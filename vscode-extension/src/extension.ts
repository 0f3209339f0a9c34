// The VS Code side: start the skills-lsp server with vscode-languageclient, and the commands
// around it. Decisions (launch command, settings, selector, quick-pick rows) live in the
// vscode-free modules next to this one, which have unit tests.

import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  RevealOutputChannelOn,
  type ServerOptions,
  State,
} from 'vscode-languageclient/node';

import { CLIENT_ID, CLIENT_NAME, COMMANDS, CONFIG_SECTION, OUTPUT_CHANNEL, PYTHON_EXTENSION_ID, SERVER_COMMANDS } from './ids';
import {
  parseIndexEntries,
  parseScoreResults,
  type PickRow,
  indexRows,
  queryFromArgs,
  scoreRows,
  scoreTitle,
  siblingSkillsDir,
  uriFromArgs,
  validateSkillName,
} from './items';
import {
  describeLaunch,
  type ExpandContext,
  interpreterFromPythonApi,
  type Launch,
  pipInstallCommand,
  type ProbeOutcome,
  readLaunchSettings,
  resolveLaunch,
  runProbe,
  workingDirectory,
} from './launch';
import { documentSelector, watchGlobs } from './selector';
import {
  initializationOptions,
  needsRestart,
  sanitiseConfigurationAnswer,
  SERVER_SETTING_KEYS,
  toServerSettings,
} from './settings';

const PROBE_TIMEOUT_MS = 20_000;
const PYTHON_API_TIMEOUT_MS = 15_000;

let controller: Controller | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel(OUTPUT_CHANNEL);
  controller = new Controller(context, output);
  const c = controller;
  context.subscriptions.push(
    output,
    c,
    vscode.commands.registerCommand(COMMANDS.restartServer, () => c.restart(true)),
    vscode.commands.registerCommand(COMMANDS.showOutput, () => output.show(true)),
    vscode.commands.registerCommand(COMMANDS.scoreQueryInteractive, (hint?: unknown) => c.scoreQueryInteractive(hint)),
    vscode.commands.registerCommand(COMMANDS.showIndexInteractive, () => c.showIndexInteractive()),
    vscode.commands.registerCommand(COMMANDS.newSkillInteractive, () => c.newSkillInteractive()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (needsRestart((section) => event.affectsConfiguration(section))) {
        output.appendLine('Settings changed: restarting the server.');
        void c.restart(false);
      }
      // Other skillsLsp.* changes reach the running server as workspace/didChangeConfiguration
      // (synchronize.configurationSection), and it re-reads workspace/configuration.
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void c.restart(false)),
  );
  await c.start();
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
  controller = undefined;
}

function firstFolder(): vscode.WorkspaceFolder | undefined {
  return vscode.workspace.workspaceFolders?.[0];
}

/** The `skillsLsp` section as a plain object of the server's keys (for settings.ts). */
function serverSection(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration(CONFIG_SECTION, firstFolder()?.uri);
  return Object.fromEntries(SERVER_SETTING_KEYS.map((key) => [key, config.get(key)]));
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function withTimeout<T>(promise: Thenable<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([Promise.resolve(promise), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

class Controller implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly clientDisposables: vscode.Disposable[] = [];
  /** Starts and stops run one after the other. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Why the server is not running, for commands that need it. */
  private failure: string | undefined;
  private readonly status: vscode.LanguageStatusItem;
  private pythonApiWatched = false;
  private lastQuery = '';

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
  ) {
    this.status = vscode.languages.createLanguageStatusItem('skillsLsp.status', documentSelector());
    this.status.name = CLIENT_NAME;
    this.status.text = CLIENT_NAME;
    this.status.command = { title: 'Restart', command: COMMANDS.restartServer };
  }

  dispose(): void {
    this.status.dispose();
  }

  private log(message: string): void {
    this.output.appendLine(`[${new Date().toLocaleTimeString()}] ${message}`);
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  restart(announce: boolean): Promise<void> {
    return this.enqueue(async () => {
      await this.doStop();
      await this.doStart();
      if (announce && this.client?.state === State.Running) {
        vscode.window.setStatusBarMessage('Skills LSP: server restarted', 3000);
      }
    });
  }

  private setStatus(detail: string, severity: vscode.LanguageStatusSeverity, busy = false): void {
    this.status.detail = detail;
    this.status.severity = severity;
    this.status.busy = busy;
  }

  private expandContext(folder: vscode.WorkspaceFolder | undefined): ExpandContext {
    return {
      workspaceFolder: folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined,
      userHome: os.homedir(),
      env: process.env,
      platform: process.platform,
    };
  }

  /** The Python extension's active interpreter, if that extension is installed. */
  private async pythonFromExtension(resource: vscode.Uri | undefined): Promise<string[] | undefined> {
    const extension = vscode.extensions.getExtension(PYTHON_EXTENSION_ID);
    if (!extension) {
      return undefined;
    }
    try {
      const api: unknown = extension.isActive
        ? extension.exports
        : await withTimeout(extension.activate(), PYTHON_API_TIMEOUT_MS);
      this.watchPythonApi(api);
      return await interpreterFromPythonApi(api, resource);
    } catch (error) {
      this.log(`The Python extension gave no interpreter: ${errorText(error)}`);
      return undefined;
    }
  }

  /** Restart when the user picks another interpreter (only matters while we use it). */
  private watchPythonApi(api: unknown): void {
    const event = (api as { environments?: { onDidChangeActiveEnvironmentPath?: unknown } } | undefined)
      ?.environments?.onDidChangeActiveEnvironmentPath;
    if (this.pythonApiWatched || typeof event !== 'function') {
      return;
    }
    this.pythonApiWatched = true;
    const subscription = (event as vscode.Event<unknown>)(() => {
      const server = vscode.workspace.getConfiguration(CONFIG_SECTION, firstFolder()?.uri).get('server');
      const settings = readLaunchSettings(server);
      if (settings.command.length === 0 && !settings.pythonPath) {
        this.log('The Python extension switched interpreters: restarting the server.');
        void this.restart(false);
      }
    });
    this.context.subscriptions.push(subscription);
  }

  private async doStart(): Promise<void> {
    if (this.client) {
      return;
    }
    this.failure = undefined;
    this.setStatus('Starting…', vscode.LanguageStatusSeverity.Information, true);
    const folder = firstFolder();
    const config = vscode.workspace.getConfiguration(CONFIG_SECTION, folder?.uri);
    const settings = readLaunchSettings(config.get('server'));
    const ctx = this.expandContext(folder);
    const fromExtension =
      settings.command.length === 0 && !settings.pythonPath ? await this.pythonFromExtension(folder?.uri) : undefined;
    const launch = resolveLaunch({ settings, pythonFromExtension: fromExtension, ctx });
    const cwd = workingDirectory({
      trusted: vscode.workspace.isTrusted,
      workspaceFolder: ctx.workspaceFolder,
      fallback: this.context.extensionUri.fsPath,
    });
    this.log(`Server command (from ${launch.source}): ${describeLaunch(launch, process.platform)}`);

    if (launch.python) {
      const outcome = await runProbe(launch.python, { cwd, env: process.env, timeoutMs: PROBE_TIMEOUT_MS });
      if (outcome.kind === 'ok') {
        this.log(`skills-lsp ${outcome.version} on Python ${outcome.pythonVersion} (${outcome.executable})`);
      } else if (outcome.kind === 'timeout') {
        this.log(`The Python probe timed out after ${PROBE_TIMEOUT_MS / 1000} s; starting the server anyway.`);
      } else {
        this.fail(launch, outcome);
        return;
      }
    }

    const serverOptions: ServerOptions = {
      command: launch.command,
      args: [...launch.args],
      options: { cwd, env: process.env },
      // No `transport`: TransportKind.stdio would append `--stdio` (the server accepts it, but a
      // custom command might not); without it the client talks over the process's stdio anyway.
    };
    const paths = toServerSettings(serverSection());
    const fileWatchers = watchGlobs(paths).map((glob) =>
      vscode.workspace.createFileSystemWatcher(glob),
    );
    this.clientDisposables.push(...fileWatchers);
    const clientOptions: LanguageClientOptions = {
      documentSelector: documentSelector(paths),
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // No diagnosticCollectionName: the server's pull identifier is 'skills-lsp', and two
      // collections of one name make VS Code warn.
      // A function: a restart sends the settings of that moment.
      initializationOptions: () => initializationOptions(serverSection()),
      synchronize: {
        configurationSection: CONFIG_SECTION,
        fileEvents: fileWatchers,
      },
      middleware: {
        // The code lens "Score a query..." runs skillsLsp.scoreQuery with only the file's URI:
        // ask for the query here instead of letting the server say it needs one.
        executeCommand: async (command, args, next) => {
          if (command === SERVER_COMMANDS.scoreQuery && queryFromArgs(args) === undefined) {
            return vscode.commands.executeCommand(COMMANDS.scoreQueryInteractive, uriFromArgs(args));
          }
          return next(command, args);
        },
        workspace: {
          // The server gets exactly its documented keys, sanitised.
          configuration: async (params, token, next) => {
            const values = await next(params, token);
            return Array.isArray(values) ? sanitiseConfigurationAnswer(params.items, values) : values;
          },
        },
      },
    };
    const client = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    this.client = client;
    this.clientDisposables.push(
      client.onDidChangeState((event) => {
        if (event.newState === State.Running) {
          this.setStatus(`Running: ${describeLaunch(launch, process.platform)}`, vscode.LanguageStatusSeverity.Information);
        } else if (event.newState === State.Stopped && this.client === client) {
          this.setStatus('Stopped', vscode.LanguageStatusSeverity.Warning);
        }
      }),
    );
    try {
      await client.start();
    } catch (error) {
      this.log(`The server did not start: ${errorText(error)}`);
      await this.doStop();
      this.failure = `the server did not start (${errorText(error)})`;
      this.setStatus('Not running: the server did not start', vscode.LanguageStatusSeverity.Error);
      void this.showStartError(launch, errorText(error));
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        if (client.needsStop()) {
          await client.stop(5000);
        }
      } catch (error) {
        this.log(`Stopping the server: ${errorText(error)}`);
      }
      try {
        await client.dispose();
      } catch {
        // already stopped
      }
    }
    for (const d of this.clientDisposables.splice(0)) {
      d.dispose();
    }
    this.setStatus('Stopped', vscode.LanguageStatusSeverity.Warning);
  }

  // --- telling the user what is wrong -----------------------------------------------------------

  private fail(launch: Launch, outcome: Exclude<ProbeOutcome, { kind: 'ok' | 'timeout' }>): void {
    const python = launch.python ?? [launch.command];
    const shown = python.join(' ');
    this.log(`Python probe (${shown}): ${outcome.kind}: ${outcome.detail}`);
    switch (outcome.kind) {
      case 'module-missing':
      case 'import-failed': {
        const upgrade = outcome.kind === 'import-failed';
        const install = pipInstallCommand(python, process.platform, upgrade);
        this.failure = upgrade
          ? `importing skills_lsp with ${shown} failed (${outcome.detail})`
          : `skills-lsp is not installed for ${shown}`;
        this.setStatus(`Not running: ${this.failure}`, vscode.LanguageStatusSeverity.Error);
        this.log(`Install it with: ${install}`);
        if (launch.source === 'default' && vscode.env.remoteName) {
          // Seen in code-server: a remote window may ignore machine-scoped values in User settings.
          this.log(
            `This is a remote window (${vscode.env.remoteName}): if you set skillsLsp.server.command or pythonPath in User settings, set it in Remote or workspace settings instead.`,
          );
        }
        const message = upgrade
          ? `Skills LSP: importing skills_lsp with ${shown} failed (${outcome.detail}). Reinstall it: ${install}`
          : `Skills LSP: the skills-lsp package is not installed for ${shown}. Install it: ${install}`;
        void this.offerInstall(message, install);
        return;
      }
      case 'python-missing':
        this.failure = `the Python interpreter ${shown} was not found`;
        break;
      case 'python-too-old':
        this.failure = `${shown} is too old (${outcome.detail})`;
        break;
    }
    this.setStatus(`Not running: ${this.failure}`, vscode.LanguageStatusSeverity.Error);
    void this.showSettingsError(
      `Skills LSP: ${this.failure}. Set skillsLsp.server.pythonPath (or pick an interpreter with the Python extension), then run "Skills: Restart Server".`,
    );
  }

  private async offerInstall(message: string, install: string): Promise<void> {
    const copy = 'Copy Command';
    const terminal = 'Run in Terminal';
    const settings = 'Open Settings';
    const choice = await vscode.window.showErrorMessage(message, copy, terminal, settings);
    if (choice === copy) {
      await vscode.env.clipboard.writeText(install);
      const restart = 'Restart Server';
      const next = await vscode.window.showInformationMessage(
        `Copied: ${install}. Run it in a terminal, then restart the server.`,
        restart,
      );
      if (next === restart) {
        await this.restart(true);
      }
    } else if (choice === terminal) {
      const term = vscode.window.createTerminal({ name: 'Install skills-lsp' });
      term.show();
      term.sendText(install, true);
      const restart = 'Restart Server';
      const next = await vscode.window.showInformationMessage(
        'When the installation has finished, restart the server.',
        restart,
      );
      if (next === restart) {
        await this.restart(true);
      }
    } else if (choice === settings) {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'skillsLsp.server');
    }
  }

  private async showSettingsError(message: string): Promise<void> {
    const settings = 'Open Settings';
    const output = 'Show Output';
    const choice = await vscode.window.showErrorMessage(message, settings, output);
    if (choice === settings) {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'skillsLsp.server');
    } else if (choice === output) {
      this.output.show(true);
    }
  }

  private async showStartError(launch: Launch, detail: string): Promise<void> {
    await this.showSettingsError(
      `Skills LSP: the server did not start (${detail}). Command: ${describeLaunch(launch, process.platform)}. See the output for its error.`,
    );
  }

  // --- commands ---------------------------------------------------------------------------------

  /** The running client, after any start or restart in progress; else tells the user why not. */
  private async runningClient(): Promise<LanguageClient | undefined> {
    await this.queue;
    if (this.client && this.client.state === State.Running) {
      return this.client;
    }
    const restart = 'Restart Server';
    const output = 'Show Output';
    const why = this.failure ?? 'it stopped';
    const choice = await vscode.window.showErrorMessage(`Skills LSP: the server is not running: ${why}.`, restart, output);
    if (choice === restart) {
      await this.restart(true);
    } else if (choice === output) {
      this.output.show(true);
    }
    return undefined;
  }

  private async execute(client: LanguageClient, command: string, args: unknown[]): Promise<unknown> {
    try {
      return await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
    } catch (error) {
      void vscode.window.showErrorMessage(`Skills LSP: ${command} failed: ${errorText(error)}`);
      return undefined;
    }
  }

  /**
   * A URI telling the server which workspace folder to use: the hint, else the active editor's
   * file when it is in a folder, else the only folder, else the folder the user picks.
   */
  private async folderArgument(hint?: unknown): Promise<string | undefined | null> {
    if (typeof hint === 'string' && hint) {
      return hint;
    }
    if (hint instanceof vscode.Uri) {
      return hint.toString();
    }
    const folders = vscode.workspace.workspaceFolders ?? [];
    const active = vscode.window.activeTextEditor?.document.uri;
    if (active && active.scheme === 'file' && vscode.workspace.getWorkspaceFolder(active)) {
      return active.toString();
    }
    if (folders.length <= 1) {
      return folders[0]?.uri.toString();
    }
    const picked = await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Workspace folder to search' });
    return picked ? picked.uri.toString() : null; // null: cancelled
  }

  private relative(uri: string): string {
    try {
      return vscode.workspace.asRelativePath(vscode.Uri.parse(uri), (vscode.workspace.workspaceFolders?.length ?? 0) > 1);
    } catch {
      return uri;
    }
  }

  private async open(uri: string): Promise<void> {
    try {
      await vscode.window.showTextDocument(vscode.Uri.parse(uri), { preview: false });
    } catch (error) {
      void vscode.window.showErrorMessage(`Skills LSP: cannot open ${uri}: ${errorText(error)}`);
    }
  }

  private async pickAndOpen(rows: PickRow[], title: string, placeHolder: string): Promise<void> {
    const picked = await vscode.window.showQuickPick(rows, {
      title,
      placeHolder,
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (picked) {
      await this.open(picked.uri);
    }
  }

  async scoreQueryInteractive(hint?: unknown): Promise<unknown> {
    const client = await this.runningClient();
    if (!client) {
      return undefined;
    }
    const query = await vscode.window.showInputBox({
      title: 'Skills: Score Query',
      prompt: 'A user request: which skills would it select, and with what score?',
      placeHolder: 'e.g. fill in the fields of a PDF form',
      value: this.lastQuery,
      ignoreFocusOut: true,
    });
    if (!query?.trim()) {
      return undefined;
    }
    this.lastQuery = query;
    const folder = await this.folderArgument(hint);
    if (folder === null) {
      return undefined;
    }
    const answer = await this.execute(client, SERVER_COMMANDS.scoreQuery, folder ? [query, folder] : [query]);
    const results = parseScoreResults(answer);
    if (results.length === 0) {
      if (answer !== undefined) {
        void vscode.window.showInformationMessage(`Skills LSP: no skill scores above zero for "${query}".`);
      }
      return answer;
    }
    await this.pickAndOpen(
      scoreRows(results, (uri) => this.relative(uri)),
      scoreTitle(query, results),
      'Best first; pick one to open it',
    );
    return answer;
  }

  async showIndexInteractive(): Promise<void> {
    const client = await this.runningClient();
    if (!client) {
      return;
    }
    const folder = await this.folderArgument();
    if (folder === null) {
      return;
    }
    const answer = await this.execute(client, SERVER_COMMANDS.showIndex, folder ? [folder] : []);
    const entries = parseIndexEntries(answer);
    if (entries.length === 0) {
      if (answer !== undefined) {
        void vscode.window.showInformationMessage('Skills LSP: no skills indexed in this workspace folder.');
      }
      return;
    }
    await this.pickAndOpen(
      indexRows(entries, (uri) => this.relative(uri)),
      `Skills index (${entries.length})`,
      'Type to filter by name, kind, path or description; pick one to open it',
    );
  }

  async newSkillInteractive(): Promise<void> {
    const client = await this.runningClient();
    if (!client) {
      return;
    }
    const name = await vscode.window.showInputBox({
      title: 'Skills: New Skill',
      prompt: 'Name of the new skill (lowercase a-z, 0-9 and single hyphens)',
      placeHolder: 'pdf-forms',
      ignoreFocusOut: true,
      validateInput: validateSkillName,
    });
    if (!name) {
      return;
    }
    const parent = await this.pickParentFolder(name);
    if (!parent) {
      return;
    }
    const answer = await this.execute(client, SERVER_COMMANDS.newSkill, [name, parent.toString()]);
    if (typeof answer === 'string' && answer) {
      await this.open(answer);
    }
  }

  /** Where to create the skill: beside the current skill, a folder's `skills/`, or any folder. */
  private async pickParentFolder(name: string): Promise<vscode.Uri | undefined> {
    type Choice = vscode.QuickPickItem & { uri?: vscode.Uri };
    const choices: Choice[] = [];
    const active = vscode.window.activeTextEditor?.document.uri;
    const sibling = active?.scheme === 'file' ? siblingSkillsDir(active.fsPath, process.platform) : undefined;
    if (sibling) {
      const uri = vscode.Uri.file(sibling);
      choices.push({
        label: `$(folder) ${vscode.workspace.asRelativePath(uri)}`,
        description: 'beside the current skill',
        detail: `Creates ${vscode.workspace.asRelativePath(vscode.Uri.joinPath(uri, name, 'SKILL.md'))}`,
        uri,
      });
    }
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      const uri = vscode.Uri.joinPath(folder.uri, 'skills');
      if (choices.some((c) => c.uri?.toString() === uri.toString())) {
        continue;
      }
      choices.push({
        label: `$(folder) ${folder.name}/skills`,
        description: 'workspace skills folder',
        detail: `Creates ${vscode.workspace.asRelativePath(vscode.Uri.joinPath(uri, name, 'SKILL.md'), true)}`,
        uri,
      });
    }
    const browse: Choice = { label: '$(folder-opened) Choose a folder…' };
    let picked: Choice | undefined = browse;
    if (choices.length > 0) {
      picked = await vscode.window.showQuickPick([...choices, browse], {
        title: `Skills: New Skill "${name}"`,
        placeHolder: 'Where should the skill folder go?',
      });
    }
    if (!picked) {
      return undefined;
    }
    if (picked.uri) {
      return picked.uri;
    }
    const chosen = await vscode.window.showOpenDialog({
      canSelectFiles: false,
      canSelectFolders: true,
      canSelectMany: false,
      defaultUri: firstFolder()?.uri,
      openLabel: 'Create the skill here',
      title: `Folder for the new skill "${name}"`,
    });
    return chosen?.[0];
  }
}
