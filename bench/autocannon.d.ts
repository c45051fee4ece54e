// The few parts of autocannon 9 the benchmark uses (the package ships no types).
declare module 'autocannon' {
  interface RawRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }
  interface Request extends RawRequest {
    setupRequest?: (request: RawRequest, context: Record<string, unknown>) => RawRequest;
  }
  interface Options {
    url: string;
    connections?: number;
    amount?: number;
    duration?: number;
    overallRate?: number;
    timeout?: number;
    pipelining?: number;
    method?: string;
    requests?: Request[];
  }
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9?: number;
    totalCount?: number;
  }
  interface Result {
    requests: Histogram & { total: number; sent: number };
    latency: Histogram;
    throughput: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
    start: Date;
    finish: Date;
  }
  interface Instance extends Promise<Result> {
    stop(): void;
    on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTime: number) => void): void;
  }
  function autocannon(options: Options): Instance;
  export default autocannon;
}
