/**
 * A node:test reporter that test/run.ts adds beside spec: at the end of a run, the ten slowest
 * test files with their wall time (from the child process's start to its end, so a file's own
 * setup counts), and with coverage on, the line coverage total. What makes a run slow is then in
 * its own output, not a guess.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestEvent } from 'node:test/reporters';

const SHOWN = 10;

type CoverageSummary = Extract<TestEvent, { type: 'test:coverage' }>['data']['summary'];

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`.padStart(8);
}

/** Per file, the lines counted and those run: what a second run's coverage merges with (TEST_COVERAGE_LINES_FILE). */
function linesByFile(summary: CoverageSummary): Record<string, { covered: number[]; uncovered: number[] }> {
  const files: Record<string, { covered: number[]; uncovered: number[] }> = {};
  for (const file of summary.files) {
    const relative = path.relative(summary.workingDirectory, file.path);
    files[relative] = {
      covered: file.lines.filter((l) => l.count > 0).map((l) => l.line),
      uncovered: file.lines.filter((l) => l.count === 0).map((l) => l.line),
    };
  }
  return files;
}

export default async function* slowestFiles(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const files = new Map<string, number>();
  let coverage: CoverageSummary | undefined;
  for await (const event of source) {
    // Each file runs as a test of its own at nesting 0, named by the path it was given.
    if (event.type === 'test:complete' && event.data.nesting === 0 && event.data.file && path.resolve(event.data.name) === event.data.file) {
      files.set(event.data.name, event.data.details.duration_ms);
    }
    if (event.type === 'test:coverage') coverage = event.data.summary;
  }
  const slowest = [...files].sort((a, b) => b[1] - a[1]).slice(0, SHOWN);
  yield `\n# the ${slowest.length} slowest of ${files.size} test files (wall time of each file's process)\n`;
  for (const [file, ms] of slowest) yield `# ${seconds(ms)}  ${file}\n`;
  if (coverage) {
    const { totals } = coverage;
    yield `# line coverage: ${totals.coveredLinePercent.toFixed(2)}% (${totals.coveredLineCount} of ${totals.totalLineCount} lines)\n`;
    const linesFile = process.env.TEST_COVERAGE_LINES_FILE;
    if (linesFile) {
      writeFileSync(linesFile, JSON.stringify(linesByFile(coverage)));
      yield `# covered lines per file written to ${linesFile}\n`;
    }
  }
}
