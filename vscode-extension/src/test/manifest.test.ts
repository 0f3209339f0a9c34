// package.json agrees with the code: commands, settings, activation, pure modules.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { CLIENT_ID, COMMANDS, CONFIG_SECTION, SERVER_COMMANDS } from '../ids';
import { SERVED_GLOBS } from '../selector';
import { PROFILES, SCORERS, SERVER_SETTING_KEYS } from '../settings';

const ROOT = path.resolve(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const properties: Record<string, any> = manifest.contributes.configuration.properties;

describe('package.json', () => {
  test('contributes every extension command, under the Skills category, and no server command', () => {
    const contributed: string[] = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
    assert.deepEqual(contributed, Object.values(COMMANDS).sort());
    for (const c of manifest.contributes.commands) {
      assert.equal(c.category, 'Skills');
    }
    const titles = Object.fromEntries(manifest.contributes.commands.map((c: any) => [c.command, c.title]));
    assert.equal(titles[COMMANDS.scoreQueryInteractive], 'Score Query...');
    assert.equal(titles[COMMANDS.newSkillInteractive], 'New Skill...');
    assert.equal(titles[COMMANDS.showIndexInteractive], 'Show Index');
    assert.equal(titles[COMMANDS.restartServer], 'Restart Server');
    for (const id of Object.values(SERVER_COMMANDS)) {
      assert.ok(!(contributed as string[]).includes(id), `${id} is registered by vscode-languageclient`);
    }
  });

  test('declares every server setting, the launch settings and the trace setting', () => {
    for (const key of SERVER_SETTING_KEYS) {
      assert.ok(properties[`${CONFIG_SECTION}.${key}`], key);
    }
    assert.deepEqual(properties['skillsLsp.profile'].enum, ['', ...PROFILES]);
    assert.equal(properties['skillsLsp.profile'].enumDescriptions.length, PROFILES.length + 1);
    const scorer = properties['skillsLsp.scorer'];
    assert.deepEqual(scorer.enum, ['', ...SCORERS]);
    assert.equal(scorer.enumDescriptions.length, SCORERS.length + 1);
    assert.equal(scorer.default, '');
    assert.equal(scorer.scope, 'window');
    // semantic and hybrid name the extra they need; the description says what follows the setting.
    for (const i of [SCORERS.indexOf('semantic') + 1, SCORERS.indexOf('hybrid') + 1]) {
      assert.match(scorer.enumDescriptions[i], /skills-lsp\[semantic\]/);
    }
    assert.match(scorer.markdownDescription, /skills-lsp\[semantic\]/);
    assert.match(scorer.markdownDescription, /code lenses/);
    assert.match(scorer.markdownDescription, /hovers/);
    assert.match(scorer.markdownDescription, /Score Query/);
    assert.equal(properties['skillsLsp.server.command'].type, 'array');
    assert.equal(properties['skillsLsp.server.pythonPath'].type, 'string');
    assert.equal(properties['skillsLsp.select'].type, 'array');
    assert.equal(properties['skillsLsp.ignore'].type, 'array');
    // vscode-languageclient reads `<client id>.trace.server`.
    assert.deepEqual(properties[`${CLIENT_ID}.trace.server`].enum, ['off', 'messages', 'verbose']);
    assert.deepEqual(Object.keys(properties).sort(), [
      ...SERVER_SETTING_KEYS.map((k) => `skillsLsp.${k}`),
      'skillsLsp.server.command',
      'skillsLsp.server.pythonPath',
      'skillsLsp.trace.server',
    ].sort());
  });

  test('untrusted workspaces cannot choose the executable', () => {
    assert.deepEqual(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations.sort(), [
      'skillsLsp.server.command',
      'skillsLsp.server.pythonPath',
    ]);
  });

  test('activates on the skill language and on every served file', () => {
    const events: string[] = manifest.activationEvents;
    assert.ok(events.includes('onLanguage:skill'));
    for (const glob of SERVED_GLOBS) {
      assert.ok(events.includes(`workspaceContains:${glob}`), glob);
    }
  });

  test('no hard dependency on the Python extension; engine and pinned versions', () => {
    assert.equal(manifest.extensionDependencies, undefined);
    assert.equal(manifest.engines.vscode, '^1.82.0');
    assert.equal(manifest.main, './dist/extension.js');
    for (const [name, version] of Object.entries({ ...manifest.dependencies, ...manifest.devDependencies })) {
      assert.match(String(version), /^\d+\.\d+\.\d+$/, `${name} is not pinned`);
    }
    assert.match(manifest.dependencies['vscode-languageclient'], /^9\./);
    // vsce refuses @types/vscode newer than engines.vscode.
    assert.equal(manifest.devDependencies['@types/vscode'], '1.82.0');
  });
});

describe('schemas for the YAML and JSON language services', () => {
  type Validation = { fileMatch: string | string[]; url: string };
  const schemaFor = (entries: Validation[]) => {
    const found: Record<string, string> = {};
    for (const entry of entries) {
      for (const match of ([] as string[]).concat(entry.fileMatch)) {
        found[match] = entry.url;
      }
    }
    return found;
  };

  test('the query file, the tool manifest, evals/evals.json and evals/eval_queries.json each get their schema', () => {
    const queries = './dist/schemas/skill-queries.schema.json';
    const tools = './dist/schemas/tool-registry.schema.json';
    assert.deepEqual(schemaFor(manifest.contributes.yamlValidation), {
      'skill-queries.yaml': queries,
      'skill-queries.yml': queries,
      'skill-tools.yaml': tools,
      'skill-tools.yml': tools,
    });
    assert.deepEqual(schemaFor(manifest.contributes.jsonValidation), {
      'skill-queries.json': queries,
      'skill-tools.json': tools,
      '**/evals/evals.json': './dist/schemas/evals.schema.json',
      '**/evals/eval_queries.json': './dist/schemas/eval-queries.schema.json',
    });
  });

  test('every schema named is one of the project schemas, which the build copies and the .vsix keeps', () => {
    const entries: Validation[] = [...manifest.contributes.yamlValidation, ...manifest.contributes.jsonValidation];
    for (const { url } of entries) {
      const name = path.basename(url);
      assert.equal(url, `./dist/schemas/${name}`);
      const schema = JSON.parse(fs.readFileSync(path.join(ROOT, '..', 'schema', name), 'utf8'));
      assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema', name);
    }
    assert.match(fs.readFileSync(path.join(ROOT, 'esbuild.mjs'), 'utf8'), /dist\/schemas/);
    assert.match(fs.readFileSync(path.join(ROOT, '.vscodeignore'), 'utf8'), /^!dist\/schemas\/\*\.schema\.json$/m);
  });
});

describe('vscode-free modules', () => {
  test('launch, settings, selector, items and ids never import vscode', () => {
    for (const name of ['launch', 'settings', 'selector', 'items', 'ids']) {
      const source = fs.readFileSync(path.join(ROOT, 'src', `${name}.ts`), 'utf8');
      assert.doesNotMatch(source, /from\s+['"]vscode['"]|require\(\s*['"]vscode['"]\s*\)/, name);
    }
  });

  test('the extension never asks vscode-languageclient to append --stdio', () => {
    const code = fs.readFileSync(path.join(ROOT, 'src', 'extension.ts'), 'utf8').replace(/\/\/.*$/gm, '');
    assert.doesNotMatch(code, /TransportKind|\btransport\s*:/);
  });
});
