// Which documents the client sends to the server, and which files it watches (no `vscode`
// import: unit-tested by node --test).
//
// VS Code gives `SKILL.md` its own built-in language id `skill` (extension prompt-basics), so a
// markdown-only selector never reaches it; older VS Code calls it `markdown`. Every filter but
// the language one is therefore a file pattern with no language, which matches whatever language
// VS Code or another extension assigns (the tool manifest and the query file are `yaml`,
// `json` or `plaintext` depending on installed extensions).

/** The shape of a vscode.DocumentFilter that this module builds. */
export interface DocumentFilter {
  readonly scheme: string;
  readonly language?: string;
  readonly pattern?: string;
}

export const SKILL_LANGUAGE = 'skill';

export const SKILL_GLOBS: readonly string[] = [
  '**/SKILL.md',
  '**/.skills/**/*.md',
  '**/.claude/skills/**/*.md',
];
export const CONVENTION_GLOB = '**/{AGENTS,AGENT,CLAUDE,GEMINI,COPILOT,SKILLS,SOUL}.md';
export const QUERY_FILE_GLOB = '**/skill-queries.{yaml,yml,json}';
/** A skill's trigger evals (agentskills `evals/eval_queries.json`): lenses, hovers and SK702. */
export const EVAL_QUERIES_GLOB = '**/evals/eval_queries.json';
export const TOOL_MANIFEST_GLOB = '**/skill-tools.{yaml,yml,json}';
/** Config files: the server re-reads `[tool.skills-lsp]` / `skills-lsp.toml` when they change. */
export const CONFIG_GLOB = '**/{pyproject.toml,skills-lsp.toml}';
/** Files watched but not served: a skill's evals, and the ignore files discovery honours. */
export const WATCHED_ONLY_GLOBS: readonly string[] = [
  '**/evals/*.json',
  '**/{.gitignore,.ignore}',
  '**/.git/info/exclude',
];

/** The files the server serves, by default. */
export const SERVED_GLOBS: readonly string[] = [
  ...SKILL_GLOBS,
  CONVENTION_GLOB,
  QUERY_FILE_GLOB,
  TOOL_MANIFEST_GLOB,
  EVAL_QUERIES_GLOB,
];

/** Settings that move the query file or the tool manifest somewhere else. */
export interface CustomPaths {
  readonly toolManifest?: string;
  readonly queryFile?: string;
}

/**
 * A glob for a path setting: relative paths (taken from a workspace folder by the server) match
 * under any folder; an absolute path matches itself. Undefined for an empty setting. VS Code's
 * globs have no escape, so glob characters in the setting act as glob characters.
 */
export function globForPath(value: string | undefined): string | undefined {
  const trimmed = (value ?? '').trim();
  if (!trimmed) {
    return undefined;
  }
  let path = trimmed.replace(/\\/g, '/');
  if (/^([A-Za-z]:)?\//.test(path)) {
    return path;
  }
  path = path.replace(/^(\.\/)+/, '');
  return path ? `**/${path}` : undefined;
}

/** Extra globs for non-default tool-manifest / query-file paths (already-covered names skipped). */
export function customGlobs(paths: CustomPaths = {}): string[] {
  const globs: string[] = [];
  for (const value of [paths.toolManifest, paths.queryFile]) {
    const glob = globForPath(value);
    if (glob !== undefined && !globs.includes(glob) && !coveredByDefaults(glob)) {
      globs.push(glob);
    }
  }
  return globs;
}

function coveredByDefaults(glob: string): boolean {
  return /^\*\*\/skill-(queries|tools)\.(yaml|yml|json)$/.test(glob);
}

/** The client's document selector: language `skill` and every served file pattern, on disk. */
export function documentSelector(paths: CustomPaths = {}): DocumentFilter[] {
  return [
    { scheme: 'file', language: SKILL_LANGUAGE },
    ...SERVED_GLOBS.map((pattern) => ({ scheme: 'file', pattern })),
    ...customGlobs(paths).map((pattern) => ({ scheme: 'file', pattern })),
  ];
}

/** Globs for `synchronize.fileEvents`: files changed outside the editor reach the server. */
export function watchGlobs(paths: CustomPaths = {}): string[] {
  return [...SERVED_GLOBS, CONFIG_GLOB, ...WATCHED_ONLY_GLOBS, ...customGlobs(paths)];
}
