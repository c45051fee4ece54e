/**
 * Where a CPU profile's time went: `node bench/profile-summary.ts <file.cpuprofile> [top]`.
 * Self time by package (node_modules/<pkg>, src/<dir>, node internals, GC, idle) and the top
 * functions by self time — the "where the time goes" of the README's Benchmarks section.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function bucketOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : `(native) ${functionName}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const src = /\/(src|bench|test)\/([^/]+)/.exec(url);
  if (src) return `${src[1]}/${src[2]}`;
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  return url;
}

export function summarizeProfile(file: string, top = 25): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (const [i, id] of profile.samples.entries()) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const buckets = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, micros] of self) {
    const { callFrame } = byId.get(id)!;
    const bucket = bucketOf(callFrame.url, callFrame.functionName);
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + micros);
    const name = `${callFrame.functionName || '(anonymous)'} ${callFrame.url.replace(/.*node_modules\//, '').replace(/.*\/work\/main\//, '')}:${callFrame.lineNumber + 1}`;
    functions.set(name, (functions.get(name) ?? 0) + micros);
  }
  const busy = total - (buckets.get('(idle)') ?? 0);
  const line = ([name, micros]: [string, number]) =>
    `${((micros / busy) * 100).toFixed(1).padStart(5)}%  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${name}`;
  return [
    `${file}: ${(total / 1e6).toFixed(1)} s profiled, ${(busy / 1e6).toFixed(1)} s busy (percentages of busy time)`,
    '-- by package --',
    ...[...buckets]
      .filter(([k]) => k !== '(idle)')
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(line),
    '-- by function (self) --',
    ...[...functions]
      .filter(([k]) => !k.startsWith('(idle)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(line),
  ].join('\n');
}

if (import.meta.main) {
  const [file, top] = process.argv.slice(2);
  if (!file) throw new Error('usage: node bench/profile-summary.ts <file.cpuprofile> [top]');
  console.log(summarizeProfile(file, Number(top ?? 25)));
}
