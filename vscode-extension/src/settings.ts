// VS Code settings -> the server's settings (no `vscode` import: unit-tested by node --test).
//
// The server reads `profile`, `scorer`, `toolManifest`, `queryFile`, `select` and `ignore` from
// `initializationOptions`, then from `workspace/configuration` (section `skillsLsp`), on top of
// `[tool.skills-lsp]` / `skills-lsp.toml`; empty values leave the config file's choice alone.

export const PROFILES = [
  'agentskills',
  'skills-ref',
  'adk-rust',
  'claude-code',
  'adk',
  'codex',
  'gemini-cli',
  'vscode-copilot',
  'convention',
] as const;

export type Profile = (typeof PROFILES)[number];

/** The routing scorers (skills_lsp.core.files.config.SCORER_CHOICES); semantic and hybrid need the extra. */
export const SCORERS = ['lexical', 'bm25f', 'semantic', 'hybrid'] as const;

export type Scorer = (typeof SCORERS)[number];

export interface ServerSettings {
  /** One profile for every file, or '' for each file's default. */
  profile: Profile | '';
  /** The scorer of the code lenses, hovers and Score Query, or '' for the config file's choice. */
  scorer: Scorer | '';
  toolManifest: string;
  queryFile: string;
  select: string[];
  ignore: string[];
}

/** The server's keys, in the order of docs/server.md. */
export const SERVER_SETTING_KEYS: readonly (keyof ServerSettings)[] = [
  'profile',
  'scorer',
  'toolManifest',
  'queryFile',
  'select',
  'ignore',
];

/**
 * Changing these restarts the server: `server.*` choose the process; `toolManifest` and
 * `queryFile` also change the document selector and the file watchers. The others reach the
 * running server through `workspace/didChangeConfiguration`.
 */
export const RESTART_SECTIONS: readonly string[] = [
  'skillsLsp.server',
  'skillsLsp.toolManifest',
  'skillsLsp.queryFile',
];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

function list(value: unknown): string[] {
  if (typeof value === 'string') {
    value = value.split(',');
  }
  if (!Array.isArray(value)) {
    return [];
  }
  const out: string[] = [];
  for (const item of value) {
    const entry = text(item);
    if (entry && !out.includes(entry)) {
      out.push(entry);
    }
  }
  return out;
}

function profile(value: unknown): Profile | '' {
  const name = text(value);
  return (PROFILES as readonly string[]).includes(name) ? (name as Profile) : '';
}

function scorer(value: unknown): Scorer | '' {
  const name = text(value);
  return (SCORERS as readonly string[]).includes(name) ? (name as Scorer) : '';
}

/**
 * The server's settings from the `skillsLsp` section (as `getConfiguration('skillsLsp')` or a
 * `workspace/configuration` answer gives it): unknown keys (`server`, `trace`) dropped, wrong
 * types, unknown profiles and unknown scorers emptied, list entries trimmed and de-duplicated.
 */
export function toServerSettings(section: unknown): ServerSettings {
  const raw = isRecord(section) ? section : {};
  return {
    profile: profile(raw.profile),
    scorer: scorer(raw.scorer),
    toolManifest: text(raw.toolManifest),
    queryFile: text(raw.queryFile),
    select: list(raw.select),
    ignore: list(raw.ignore),
  };
}

/** `initializationOptions` for the server: the sanitised settings. */
export function initializationOptions(section: unknown): ServerSettings {
  return toServerSettings(section);
}

/** Whether a configuration change needs a restart (`affects` = event.affectsConfiguration). */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return RESTART_SECTIONS.some((section) => affects(section));
}

/**
 * A `workspace/configuration` answer with every `skillsLsp` item sanitised; other sections pass
 * through unchanged.
 */
export function sanitiseConfigurationAnswer(
  items: readonly { section?: string }[],
  values: readonly unknown[],
): unknown[] {
  return values.map((value, i) =>
    items[i]?.section === 'skillsLsp' ? toServerSettings(value) : value,
  );
}
