// Bundles src/extension.ts and vscode-languageclient into dist/extension.js (the only code in
// the .vsix), writes the licences of the bundled packages to dist/THIRD-PARTY-NOTICES.txt, and
// copies the project's JSON Schemas (../schema) to dist/schemas/ for yamlValidation/jsonValidation.
// `node esbuild.mjs --production` minifies (used by `vscode:prepublish`, so by `vsce package`).
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
const result = await esbuild.build({
  entryPoints: ['src/extension.ts'],
  bundle: true,
  format: 'cjs',
  platform: 'node',
  // VS Code 1.82 (the oldest engines.vscode allows) runs extensions on Node 18.
  target: 'node18',
  outfile: 'dist/extension.js',
  external: ['vscode'],
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  metafile: true,
  logLevel: 'info',
});

// Every package whose files went into the bundle, with its licence text.
const packages = new Map();
for (const input of Object.keys(result.metafile.inputs)) {
  const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (match && !packages.has(match[1])) {
    packages.set(match[1], JSON.parse(readFileSync(join(match[1], 'package.json'), 'utf8')));
  }
}
const notices = [...packages.entries()]
  .sort(([, a], [, b]) => a.name.localeCompare(b.name))
  .map(([dir, pkg]) => {
    const file = ['LICENSE', 'LICENSE.txt', 'LICENSE.md', 'License.txt', 'license'].find((f) => existsSync(join(dir, f)));
    const text = file ? readFileSync(join(dir, file), 'utf8').trim() : `License: ${pkg.license}`;
    return `${pkg.name} ${pkg.version} (${pkg.license})\n\n${text}\n`;
  });
writeFileSync(
  join(dirname('dist/extension.js'), 'THIRD-PARTY-NOTICES.txt'),
  `dist/extension.js bundles these packages:\n\n${notices.join('\n' + '-'.repeat(72) + '\n\n')}`,
);

// The schemas package.json hands to the YAML and JSON language services: one source, ../schema.
mkdirSync('dist/schemas', { recursive: true });
for (const name of readdirSync('../schema').filter((n) => n.endsWith('.schema.json'))) {
  copyFileSync(join('../schema', name), join('dist/schemas', name));
}
