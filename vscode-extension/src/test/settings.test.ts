import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  initializationOptions,
  needsRestart,
  PROFILES,
  sanitiseConfigurationAnswer,
  SCORERS,
  SERVER_SETTING_KEYS,
  toServerSettings,
} from '../settings';

const empty = { profile: '', scorer: '', toolManifest: '', queryFile: '', select: [], ignore: [] };

describe('toServerSettings', () => {
  test('the defaults give empty values (the config file decides)', () => {
    assert.deepEqual(toServerSettings(undefined), empty);
    assert.deepEqual(toServerSettings({}), empty);
    assert.deepEqual(toServerSettings([]), empty);
  });

  test('keeps the six server keys and drops server/trace', () => {
    const section = {
      profile: 'claude-code',
      scorer: ' hybrid ',
      toolManifest: ' tools/skill-tools.yaml ',
      queryFile: 'tests/skill-queries.yaml',
      select: ['SK2', ' SK505 ', '', 'SK2'],
      ignore: ['SK701'],
      server: { command: ['x'], pythonPath: '/p' },
      trace: { server: 'verbose' },
    };
    assert.deepEqual(toServerSettings(section), {
      profile: 'claude-code',
      scorer: 'hybrid',
      toolManifest: 'tools/skill-tools.yaml',
      queryFile: 'tests/skill-queries.yaml',
      select: ['SK2', 'SK505'],
      ignore: ['SK701'],
    });
    assert.deepEqual(Object.keys(toServerSettings(section)), [...SERVER_SETTING_KEYS]);
  });

  test('unknown profiles and wrong types are emptied; a comma string is a list', () => {
    assert.deepEqual(
      toServerSettings({ profile: 'nope', toolManifest: 3, queryFile: null, select: 'SK1, SK2', ignore: { a: 1 } }),
      { ...empty, select: ['SK1', 'SK2'] },
    );
  });

  test('unknown scorers and wrong types are emptied (the config file decides)', () => {
    for (const value of ['nope', 'BM25F', 'crate', 3, null, ['bm25f'], { scorer: 'bm25f' }]) {
      assert.equal(toServerSettings({ scorer: value }).scorer, '', String(value));
    }
  });

  test('every scorer the server knows', () => {
    assert.deepEqual([...SCORERS], ['lexical', 'bm25f', 'semantic', 'hybrid']);
    for (const s of SCORERS) {
      assert.equal(toServerSettings({ scorer: s }).scorer, s);
    }
  });

  test('the keys in the order of docs/server.md', () => {
    assert.deepEqual([...SERVER_SETTING_KEYS], ['profile', 'scorer', 'toolManifest', 'queryFile', 'select', 'ignore']);
  });

  test('every profile the server knows', () => {
    assert.deepEqual([...PROFILES], [
      'agentskills',
      'skills-ref',
      'adk-rust',
      'claude-code',
      'adk',
      'codex',
      'gemini-cli',
      'vscode-copilot',
      'convention',
    ]);
    for (const p of PROFILES) {
      assert.equal(toServerSettings({ profile: p }).profile, p);
    }
  });

  test('initializationOptions are the sanitised settings', () => {
    assert.deepEqual(initializationOptions({ profile: 'adk', server: {} }), { ...empty, profile: 'adk' });
  });
});

describe('needsRestart', () => {
  const affects = (changed: string) => (section: string) => changed === section || changed.startsWith(`${section}.`);
  test('server.*, toolManifest and queryFile restart; the rest is didChangeConfiguration', () => {
    assert.ok(needsRestart(affects('skillsLsp.server.pythonPath')));
    assert.ok(needsRestart(affects('skillsLsp.server.command')));
    assert.ok(needsRestart(affects('skillsLsp.queryFile')));
    assert.ok(needsRestart(affects('skillsLsp.toolManifest')));
    assert.ok(!needsRestart(affects('skillsLsp.profile')));
    assert.ok(!needsRestart(affects('skillsLsp.scorer')));
    assert.ok(!needsRestart(affects('skillsLsp.select')));
    assert.ok(!needsRestart(affects('skillsLsp.trace.server')));
    assert.ok(!needsRestart(affects('editor.fontSize')));
  });
});

describe('sanitiseConfigurationAnswer', () => {
  test('only skillsLsp items are rewritten', () => {
    const answer = sanitiseConfigurationAnswer(
      [{ section: 'skillsLsp' }, { section: 'editor' }, {}],
      [{ profile: 'adk', scorer: 'bm25f', trace: { server: 'off' } }, { tabSize: 2 }, null],
    );
    assert.deepEqual(answer, [{ ...empty, profile: 'adk', scorer: 'bm25f' }, { tabSize: 2 }, null]);
  });
});
