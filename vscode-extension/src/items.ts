// Server command answers -> quick-pick rows, and the checks behind the input boxes (no `vscode`
// import: unit-tested by node --test).

import * as path from 'node:path';

export interface ScoreResult {
  readonly name: string;
  readonly uri: string;
  readonly id: string;
  readonly score: number;
  /** The scorer that ranked it (`lexical`, `bm25f`, `semantic`, `hybrid`); '' from older servers. */
  readonly scorer: string;
}

export interface IndexEntry {
  readonly name: string;
  readonly description: string;
  readonly uri: string;
  readonly kind: string;
}

/** A quick-pick row (structurally a vscode.QuickPickItem) with the file to open. */
export interface PickRow {
  readonly label: string;
  readonly description?: string;
  readonly detail?: string;
  readonly uri: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `skillsLsp.scoreQuery`'s answer, `[{name, uri, id, score, scorer}]`; malformed rows dropped. */
export function parseScoreResults(value: unknown): ScoreResult[] {
  if (!Array.isArray(value)) {
    return [];
  }
  return value.flatMap((row) =>
    isRecord(row) && typeof row.name === 'string' && typeof row.uri === 'string' && typeof row.score === 'number'
      ? [
          {
            name: row.name,
            uri: row.uri,
            id: typeof row.id === 'string' ? row.id : row.name,
            score: row.score,
            scorer: typeof row.scorer === 'string' ? row.scorer.trim() : '',
          },
        ]
      : [],
  );
}

/**
 * The Score Query quick pick's title, naming the scorer the server used (it can differ from the
 * setting: without the semantic extra, semantic and hybrid fall back to bm25f).
 */
export function scoreTitle(query: string, results: readonly ScoreResult[]): string {
  const title = `Skills ranked for "${query}"`;
  const scorers = [...new Set(results.map((r) => r.scorer).filter(Boolean))];
  return scorers.length ? `${title} · scored with ${scorers.join(', ')}` : title;
}

/** `skillsLsp.showIndex`'s answer, `[{name, description, uri, kind}]`; malformed rows dropped. */
export function parseIndexEntries(value: unknown): IndexEntry[] {
  if (!Array.isArray(value)) {
    return [];
  }
  return value.flatMap((row) =>
    isRecord(row) && typeof row.name === 'string' && typeof row.uri === 'string'
      ? [
          {
            name: row.name,
            description: typeof row.description === 'string' ? row.description : '',
            uri: row.uri,
            kind: typeof row.kind === 'string' ? row.kind : '',
          },
        ]
      : [],
  );
}

/** Scores as the code lenses show them. */
export function formatScore(score: number): string {
  return Number.isFinite(score) ? score.toFixed(3) : String(score);
}

/** Ranked skills, best first (the server's order), with rank and score. */
export function scoreRows(results: readonly ScoreResult[], relative: (uri: string) => string): PickRow[] {
  return results.map((r, i) => ({
    label: r.name,
    description: `#${i + 1} · score ${formatScore(r.score)}`,
    detail: relative(r.uri),
    uri: r.uri,
  }));
}

/** Folds whitespace and cuts long descriptions for one quick-pick detail line. */
export function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1).trimEnd()}…` : flat;
}

/** Every indexed skill, sorted by name, with its kind, path and description. */
export function indexRows(entries: readonly IndexEntry[], relative: (uri: string) => string): PickRow[] {
  return [...entries]
    .sort((a, b) => a.name.localeCompare(b.name) || a.uri.localeCompare(b.uri))
    .map((e) => ({
      label: e.name,
      description: [e.kind, relative(e.uri)].filter(Boolean).join(' · '),
      detail: e.description ? oneLine(e.description) : undefined,
      uri: e.uri,
    }));
}

/**
 * The query among a command's arguments: the first string that is not a `file:` URI, as the
 * server reads it. Undefined (the code lens passes only the file's URI) means "ask for one".
 */
export function queryFromArgs(args: readonly unknown[] | undefined): string | undefined {
  const query = (args ?? []).find((a) => typeof a === 'string' && !a.startsWith('file:'));
  return typeof query === 'string' && query.trim() ? query : undefined;
}

/** The first `file:` URI among a command's arguments. */
export function uriFromArgs(args: readonly unknown[] | undefined): string | undefined {
  const uri = (args ?? []).find((a) => typeof a === 'string' && a.startsWith('file:'));
  return typeof uri === 'string' ? uri : undefined;
}

/** The longest skill name the schema allows. */
export const NAME_MAX = 64;

/** The valid name closest to `name` (the server's `suggest_name`, ASCII reading). */
export function suggestSkillName(name: string): string {
  const ascii = name.normalize('NFKD').replace(/\p{M}/gu, '');
  let slug = ascii.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  slug = slug.slice(0, NAME_MAX).replace(/-+$/, '');
  return slug || 'skill';
}

/** Input-box validation for a new skill's name: undefined when valid, else why (with a fix). */
export function validateSkillName(name: string): string | undefined {
  if (!name.trim()) {
    return 'Enter a name: lowercase a-z, 0-9 and single hyphens, for example pdf-forms.';
  }
  const suggestion = suggestSkillName(name);
  if (suggestion !== name) {
    return `Not a valid skill name (lowercase a-z, 0-9 and single hyphens, at most ${NAME_MAX} characters); try "${suggestion}".`;
  }
  return undefined;
}

/**
 * Where a new skill goes when the user is editing `<dir>/<skill>/SKILL.md`: `<dir>`, beside
 * the current skill. Undefined for any other file.
 */
export function siblingSkillsDir(fsPath: string, platform: string): string | undefined {
  const p = platform === 'win32' ? path.win32 : path.posix;
  if (p.basename(fsPath) !== 'SKILL.md') {
    return undefined;
  }
  return p.dirname(p.dirname(fsPath));
}
