// Names shared by package.json and the code (no `vscode` import: unit-tested by node --test).

/** The client id: vscode-languageclient reads `<id>.trace.server`. */
export const CLIENT_ID = 'skillsLsp';
export const CLIENT_NAME = 'Skills LSP';
export const OUTPUT_CHANNEL = 'Skills LSP';
export const CONFIG_SECTION = 'skillsLsp';

/** The extension's own commands (contributed in package.json). */
export const COMMANDS = {
  scoreQueryInteractive: 'skillsLsp.scoreQueryInteractive',
  newSkillInteractive: 'skillsLsp.newSkillInteractive',
  showIndexInteractive: 'skillsLsp.showIndexInteractive',
  restartServer: 'skillsLsp.restartServer',
  showOutput: 'skillsLsp.showOutput',
} as const;

/**
 * Commands the server declares (`executeCommandProvider`). vscode-languageclient registers a
 * client-side command of the same id for each, so the extension's commands must not reuse them.
 */
export const SERVER_COMMANDS = {
  scoreQuery: 'skillsLsp.scoreQuery',
  showIndex: 'skillsLsp.showIndex',
  newSkill: 'skillsLsp.newSkill',
} as const;

/** The Python extension, used (when installed) for its active interpreter. */
export const PYTHON_EXTENSION_ID = 'ms-python.python';

/** What `pip` installs and what `python -m` runs. */
export const PYPI_NAME = 'skills-lsp';
export const MODULE_NAME = 'skills_lsp';
