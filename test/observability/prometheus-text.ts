/** Reads one sample from Prometheus text output: the metric name plus exactly these labels. */
export function sampleValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    const keys = Object.keys(labels);
    if (keys.length === Object.keys(found).length && keys.every((k) => found[k] === labels[k])) return Number(match[3]);
  }
  return undefined;
}

export async function scrape(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  return response.text();
}
