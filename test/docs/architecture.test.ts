/**
 * docs/ARCHITECTURE.md's table of layers is .dependency-cruiser.cjs's, the rule the layer test
 * enforces: the same layers, bottom to top, each with the same folders, the isolated ones said to
 * be. A layer added to the rule and not to the page (or the other way) fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(import.meta.dirname, '../..');

interface Rule {
  name: string;
  from: { path?: string };
  to: { path?: string };
}

interface Layer {
  name: string;
  isolated: boolean;
  folders: string[];
}

/** `^src/errors\.ts$|^src/format/` → `src/errors.ts`, `src/format/`. */
const foldersOf = (pattern: string): string[] => pattern.split('|').map((p) => p.replace(/^\^/, '').replace(/\$$/, '').replaceAll('\\.', '.'));

/** The layers as the rule has them: one `upward-from-<layer>` rule per layer but the top, whose folders are the last rule's target. */
function layersOfTheRule(): Layer[] {
  const config = createRequire(import.meta.url)(path.join(root, '.dependency-cruiser.cjs')) as { forbidden: Rule[] };
  const upward = config.forbidden.filter((rule) => rule.name.startsWith('upward-from-'));
  const isolated = new Set(config.forbidden.filter((rule) => rule.name.startsWith('sideways-in-')).map((rule) => rule.name.slice('sideways-in-'.length)));
  const layers = upward.map((rule) => {
    const name = rule.name.slice('upward-from-'.length);
    return { name, isolated: isolated.has(name), folders: foldersOf(rule.from.path!) };
  });
  const top = upward.at(-1)!.to.path!;
  return [...layers, { name: '(top)', isolated: false, folders: foldersOf(top) }];
}

/** The rows of the page's table under "## Layers": `| name (isolated) | `folder`, … | … |`. */
function layersOfThePage(): Layer[] {
  const page = readFileSync(path.join(root, 'docs/ARCHITECTURE.md'), 'utf8');
  const section = page.slice(page.indexOf('## Layers'), page.indexOf('\n## ', page.indexOf('## Layers') + 1));
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| Layer '))
    .map((line) => {
      const [name, folders] = line.split(' | ') as [string, string];
      const layer = name.slice(2);
      return {
        name: layer.replace(' (isolated)', ''),
        isolated: layer.endsWith(' (isolated)'),
        folders: [...folders.matchAll(/`([^`]+)`/g)].map((m) => m[1]!),
      };
    });
}

test("docs/ARCHITECTURE.md lists .dependency-cruiser.cjs's layers, bottom to top, with their folders", () => {
  const rule = layersOfTheRule();
  const page = layersOfThePage();
  // The top layer has no rule of its own to name it: only its folders are compared.
  assert.deepEqual(
    page.map((layer, i) => (i === rule.length - 1 ? { ...layer, name: '(top)' } : layer)),
    rule,
  );
});
