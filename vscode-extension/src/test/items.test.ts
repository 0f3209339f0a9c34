import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  formatScore,
  indexRows,
  oneLine,
  parseIndexEntries,
  parseScoreResults,
  queryFromArgs,
  scoreRows,
  scoreTitle,
  siblingSkillsDir,
  suggestSkillName,
  uriFromArgs,
  validateSkillName,
} from '../items';

const rel = (uri: string) => uri.replace('file:///w/', '');

describe('scoreQuery answers', () => {
  const answer = [
    { name: 'pdf', uri: 'file:///w/skills/pdf/SKILL.md', id: 'pdf', score: 0.73219, scorer: 'hybrid' },
    { name: 'docx', uri: 'file:///w/skills/docx/SKILL.md', id: 'docx', score: 0.1, scorer: 'hybrid' },
    { name: 'broken' },
    'junk',
  ];

  test('parse drops malformed rows; non-lists are empty', () => {
    assert.equal(parseScoreResults(answer).length, 2);
    assert.deepEqual(parseScoreResults(null), []);
    assert.deepEqual(parseScoreResults({}), []);
  });

  test('rows keep the server order with rank and score', () => {
    assert.deepEqual(scoreRows(parseScoreResults(answer), rel), [
      { label: 'pdf', description: '#1 · score 0.732', detail: 'skills/pdf/SKILL.md', uri: 'file:///w/skills/pdf/SKILL.md' },
      { label: 'docx', description: '#2 · score 0.100', detail: 'skills/docx/SKILL.md', uri: 'file:///w/skills/docx/SKILL.md' },
    ]);
    assert.equal(formatScore(Number.NaN), 'NaN');
  });

  test('each row keeps the scorer; the title names it', () => {
    const results = parseScoreResults(answer);
    assert.deepEqual(results.map((r) => r.scorer), ['hybrid', 'hybrid']);
    assert.equal(scoreTitle('fill a form', results), 'Skills ranked for "fill a form" · scored with hybrid');
  });

  test('an answer without scorer (older servers) keeps the plain title', () => {
    const results = parseScoreResults([{ name: 'pdf', uri: 'file:///w/p', score: 1, scorer: 7 }, { name: 'x', uri: 'file:///w/x', score: 0.5 }]);
    assert.deepEqual(results.map((r) => r.scorer), ['', '']);
    assert.equal(scoreTitle('q', results), 'Skills ranked for "q"');
    assert.equal(scoreTitle('q', []), 'Skills ranked for "q"');
  });
});

describe('showIndex answers', () => {
  test('rows sorted by name with kind, path and a one-line description', () => {
    const entries = parseIndexEntries([
      { name: 'zeta', description: 'Z\n  skill', uri: 'file:///w/.skills/zeta.md', kind: 'adk' },
      { name: 'alpha', description: '', uri: 'file:///w/skills/alpha/SKILL.md', kind: 'agentskills' },
      { nope: true },
    ]);
    assert.deepEqual(indexRows(entries, rel), [
      { label: 'alpha', description: 'agentskills · skills/alpha/SKILL.md', detail: undefined, uri: 'file:///w/skills/alpha/SKILL.md' },
      { label: 'zeta', description: 'adk · .skills/zeta.md', detail: 'Z skill', uri: 'file:///w/.skills/zeta.md' },
    ]);
  });

  test('oneLine cuts long text', () => {
    assert.equal(oneLine('a'.repeat(300), 10), `${'a'.repeat(9)}…`);
  });
});

describe('command arguments', () => {
  test('the code lens passes only a URI: no query', () => {
    assert.equal(queryFromArgs(['file:///w/skills/pdf/SKILL.md']), undefined);
    assert.equal(queryFromArgs([]), undefined);
    assert.equal(queryFromArgs(undefined), undefined);
    assert.equal(queryFromArgs(['  ']), undefined);
    assert.equal(queryFromArgs(['fill a pdf form', 'file:///w']), 'fill a pdf form');
    assert.equal(queryFromArgs(['file:///w', 'fill a pdf form']), 'fill a pdf form');
    assert.equal(uriFromArgs(['fill', 'file:///w/x']), 'file:///w/x');
    assert.equal(uriFromArgs([42]), undefined);
  });
});

describe('skill names', () => {
  test('valid names pass', () => {
    for (const name of ['pdf', 'pdf-forms', 'a1', 'x'.repeat(64)]) {
      assert.equal(validateSkillName(name), undefined, name);
    }
  });

  test('invalid names get the suggestion the server would make', () => {
    assert.equal(suggestSkillName('PDF Forms'), 'pdf-forms');
    assert.equal(suggestSkillName('Café--Menü_'), 'cafe-menu');
    assert.equal(suggestSkillName('---'), 'skill');
    assert.equal(suggestSkillName('x'.repeat(63) + '-y'), 'x'.repeat(63));
    assert.match(validateSkillName('PDF Forms')!, /try "pdf-forms"/);
    assert.match(validateSkillName('a--b')!, /try "a-b"/);
    assert.match(validateSkillName('')!, /Enter a name/);
  });

  test('siblingSkillsDir: beside the current skill', () => {
    assert.equal(siblingSkillsDir('/w/skills/pdf/SKILL.md', 'linux'), '/w/skills');
    assert.equal(siblingSkillsDir('C:\\w\\skills\\pdf\\SKILL.md', 'win32'), 'C:\\w\\skills');
    assert.equal(siblingSkillsDir('/w/AGENTS.md', 'linux'), undefined);
  });
});
