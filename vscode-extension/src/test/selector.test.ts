import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import {
  CONFIG_GLOB,
  customGlobs,
  documentSelector,
  globForPath,
  SERVED_GLOBS,
  WATCHED_ONLY_GLOBS,
  watchGlobs,
} from '../selector';

/** A small glob matcher with VS Code's semantics for `**`, `*`, `?`, `{a,b}` and `[...]`. */
function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (glob.startsWith('**/', i)) {
      re += '(?:.*/)?';
      i += 2;
    } else if (c === '*') {
      re += '[^/]*';
    } else if (c === '?') {
      re += '[^/]';
    } else if (c === '{') {
      const end = glob.indexOf('}', i);
      re += `(?:${glob.slice(i + 1, end).split(',').map((s) => s.replace(/[.+^$()|\\]/g, '\\$&')).join('|')})`;
      i = end;
    } else if (c === '[') {
      const end = glob.indexOf(']', i);
      re += `[${glob.slice(i + 1, end)}]`;
      i = end;
    } else {
      re += c.replace(/[.+^$()|\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${re}$`);
}

/** Whether a document (path + language id) is sent to the server. */
function selected(fsPath: string, language: string): boolean {
  return documentSelector().some(
    (f) =>
      f.scheme === 'file' &&
      (f.language === undefined || f.language === language) &&
      (f.pattern === undefined || globToRegExp(f.pattern).test(fsPath)),
  );
}

describe('documentSelector', () => {
  test("reaches SKILL.md whatever its language (VS Code's built-in `skill`, or markdown)", () => {
    assert.ok(selected('/w/skills/pdf/SKILL.md', 'skill'));
    assert.ok(selected('/w/skills/pdf/SKILL.md', 'markdown'));
    assert.ok(selected('/w/SKILL.md', 'markdown'));
    assert.deepEqual(documentSelector()[0], { scheme: 'file', language: 'skill' });
  });

  test('reaches adk-skill and Claude Code skill files', () => {
    assert.ok(selected('/w/.skills/review.md', 'markdown'));
    assert.ok(selected('/w/.skills/nested/deep/review.md', 'markdown'));
    assert.ok(selected('/w/.claude/skills/pdf/reference.md', 'markdown'));
  });

  test('reaches every convention file', () => {
    for (const name of ['AGENTS', 'AGENT', 'CLAUDE', 'GEMINI', 'COPILOT', 'SKILLS', 'SOUL']) {
      assert.ok(selected(`/w/${name}.md`, 'markdown'), name);
      assert.ok(selected(`/w/sub/${name}.md`, 'markdown'), name);
    }
  });

  test('reaches the query file and the tool manifest in any language', () => {
    for (const ext of ['yaml', 'yml', 'json']) {
      for (const language of ['yaml', 'json', 'plaintext']) {
        assert.ok(selected(`/w/skill-queries.${ext}`, language));
        assert.ok(selected(`/w/sub/skill-tools.${ext}`, language));
      }
    }
  });

  test("reaches a skill's trigger evals in any language", () => {
    for (const language of ['json', 'jsonc', 'plaintext']) {
      assert.ok(selected('/w/skills/pdf/evals/eval_queries.json', language));
    }
    assert.ok(!selected('/w/skills/pdf/evals/evals.json', 'json'));
  });

  test('leaves other documents alone', () => {
    assert.ok(!selected('/w/README.md', 'markdown'));
    assert.ok(!selected('/w/docs/guide.md', 'markdown'));
    assert.ok(!selected('/w/skills/pdf/reference.md', 'markdown'));
    assert.ok(!selected('/w/config.yaml', 'yaml'));
    assert.ok(!selected('/w/skill-queries.toml', 'toml'));
    assert.ok(documentSelector().every((f) => f.scheme === 'file'));
  });

  test('adds the configured query file and manifest', () => {
    const filters = documentSelector({ queryFile: 'tests/routing.yaml', toolManifest: 'skill-tools.yaml' });
    assert.deepEqual(filters.slice(SERVED_GLOBS.length + 1), [{ scheme: 'file', pattern: '**/tests/routing.yaml' }]);
  });
});

describe('globForPath', () => {
  test('relative, absolute, Windows and empty', () => {
    assert.equal(globForPath('tests/routing.yaml'), '**/tests/routing.yaml');
    assert.equal(globForPath('./tests/routing.yaml'), '**/tests/routing.yaml');
    assert.equal(globForPath('tests\\routing.yaml'), '**/tests/routing.yaml');
    assert.equal(globForPath('/etc/skills/tools.yaml'), '/etc/skills/tools.yaml');
    assert.equal(globForPath('C:\\skills\\tools.yaml'), 'C:/skills/tools.yaml');
    assert.equal(globForPath('  '), undefined);
    assert.equal(globForPath(undefined), undefined);
    assert.ok(globToRegExp(globForPath('tests/routing.yaml')!).test('/w/tests/routing.yaml'));
  });

  test('customGlobs skips defaults and duplicates', () => {
    assert.deepEqual(customGlobs({ queryFile: 'skill-queries.yml', toolManifest: 'skill-tools.json' }), []);
    assert.deepEqual(customGlobs({ queryFile: 'q.yaml', toolManifest: './q.yaml' }), ['**/q.yaml']);
  });
});

describe('watchGlobs', () => {
  test('served files, config files, evals, ignore files and custom paths', () => {
    const globs = watchGlobs({ queryFile: 'tests/q.yaml' });
    assert.deepEqual(globs, [...SERVED_GLOBS, CONFIG_GLOB, ...WATCHED_ONLY_GLOBS, '**/tests/q.yaml']);
    assert.ok(globs.some((g) => globToRegExp(g).test('/w/.gitignore')));
    assert.ok(globs.some((g) => globToRegExp(g).test('/w/sub/.ignore')));
    assert.ok(globs.some((g) => globToRegExp(g).test('/w/skills/pdf/evals/evals.json')));
    assert.ok(globToRegExp(CONFIG_GLOB).test('/w/pyproject.toml'));
    assert.ok(globToRegExp(CONFIG_GLOB).test('/w/sub/skills-lsp.toml'));
  });

  test('the same globs the server registers (skills_lsp/server/sync.py WATCHED)', (t) => {
    // Kept in step by hand; the Python source is the reference when it is there.
    const sync = path.resolve(__dirname, '..', '..', '..', 'skills_lsp', 'server', 'sync.py');
    if (!fs.existsSync(sync)) {
      t.skip('skills_lsp/server/sync.py is not next to this extension');
      return;
    }
    const source = fs.readFileSync(sync, 'utf8');
    const block = /WATCHED = \(([\s\S]*?)\n\)/.exec(source);
    assert.ok(block, 'WATCHED not found in sync.py');
    const server = [...block[1]!.matchAll(/"([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(server.sort(), watchGlobs().sort());
  });
});
