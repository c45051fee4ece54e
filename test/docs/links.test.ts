/**
 * The docs are read by following links: every relative link in README.md, docs/, bench/README.md
 * and the other Markdown pages must reach a file, and a `#fragment` a heading of that file. Code
 * points readers at the docs too (`docs/processing.md#decisions-…` in a comment): those must
 * resolve as well, so a renamed heading or a moved page fails here instead of misleading someone.
 * And the docs point at the code (`src/inbox/group-commit.ts` in docs/ARCHITECTURE.md's walk
 * through one webhook): every path they name in code must exist, so a moved file fails here too.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(import.meta.dirname, '../..');

function filesUnder(dir: string, keep: (file: string) => boolean): string[] {
  if (!existsSync(path.join(root, dir))) return [];
  return readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
    .map((file) => path.join(dir, file))
    .filter((file) => !file.includes('node_modules') && statSync(path.join(root, file)).isFile() && keep(file));
}

const markdownPages = [
  ...readdirSync(root).filter((file) => file.endsWith('.md')),
  ...['docs', 'bench', 'test', 'ops', 'examples'].flatMap((dir) => filesUnder(dir, (file) => file.endsWith('.md') && !file.startsWith('bench/results'))),
];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = !fenced && /^#{1,6} (.+)$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

function brokenTarget(fromFile: string, target: string): string | undefined {
  const [file, fragment] = target.split('#') as [string, string | undefined];
  const resolved = file === '' ? path.join(root, fromFile) : path.resolve(path.dirname(path.join(root, fromFile)), decodeURIComponent(file));
  if (!existsSync(resolved)) return `${target}: no such file`;
  if (fragment === undefined || fragment === '' || !resolved.endsWith('.md')) return undefined;
  return anchorsOf(readFileSync(resolved, 'utf8')).has(fragment) ? undefined : `${target}: no heading with the anchor #${fragment}`;
}

/** Inline links and images outside code, except absolute URLs and mail addresses. */
function relativeLinks(markdown: string): string[] {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...withoutCode.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?: "[^"]*")?\)/g)].map((m) => m[1]!).filter((link) => !/^[a-z][a-z0-9+.-]*:/i.test(link));
}

test('every relative link of the Markdown pages reaches a file, and its #fragment a heading there', () => {
  const broken = markdownPages.flatMap((page) =>
    relativeLinks(readFileSync(path.join(root, page), 'utf8'))
      .flatMap((link) => brokenTarget(page, link) ?? [])
      .map((why) => `${page}: ${why}`),
  );
  assert.deepEqual(broken, []);
});

test('every docs/… reference in src/ names a page that exists, and its #fragment a heading there', () => {
  const sources = filesUnder('src', (file) => file.endsWith('.ts'));
  const broken = sources.flatMap((source) => {
    const text = readFileSync(path.join(root, source), 'utf8');
    return [...text.matchAll(/(?<![\w/.-])((?:docs|bench|ops)\/[\w./-]+\.(?:md|json|yml)(?:#[\w-]+)?)/g)]
      .map((m) => m[1]!)
      .flatMap((reference) => {
        const why = brokenTarget('README.md', reference);
        return why ? [`${source}: ${why}`] : [];
      });
  });
  assert.deepEqual(broken, []);
});

/**
 * Repository paths named in inline code outside fenced blocks (`src/inbox/group-commit.ts`,
 * `test/fault/`, `bench/peer/`), without a `:line` or `#anchor`. A placeholder (`<name>`), a glob
 * or an elision (`src/inbox/…`) is not a path; bench/results/ is written by the bench, not committed.
 */
function repositoryPaths(markdown: string): string[] {
  const withoutFences = markdown.replace(/```[\s\S]*?```/g, '');
  return [...withoutFences.matchAll(/`((?:src|test|bench|ops|bin|drizzle)\/[^`\s]*)`/g)]
    .map((m) => m[1]!.replace(/[:#].*$/, ''))
    .filter((p) => !/[<*…]/.test(p) && !p.startsWith('bench/results/'));
}

test('every repository path a Markdown page names in code (`src/…`, `test/…`, `bench/…`) exists', () => {
  const missing = markdownPages.flatMap((page) =>
    repositoryPaths(readFileSync(path.join(root, page), 'utf8'))
      .filter((named) => !existsSync(path.join(root, named)))
      .map((named) => `${page}: ${named}: no such file or folder`),
  );
  assert.deepEqual(missing, []);
});

/**
 * The README is a front door now; the sections comments used to cite ("README, Benchmarks") live
 * in docs/ and bench/README.md. A citation names the page by path (`docs/processing.md`, with a
 * `#fragment` or the section's name), which the test above then checks; a bare README citation
 * cannot be checked and goes stale when the front door changes.
 */
test('src/ points at the docs by path, not at README sections', () => {
  const citations = filesUnder('src', (file) => file.endsWith('.ts')).flatMap((source) =>
    readFileSync(path.join(root, source), 'utf8')
      .split('\n')
      .flatMap((line, index) => (/(?<![\w/.-])README\b/.test(line) ? [`${source}:${index + 1}: ${line.trim()}`] : [])),
  );
  assert.deepEqual(citations, [], 'name the docs page by path (docs/<page>.md#<section>, bench/README.md#<section>)');
});
