import { Writable } from 'node:stream';

/** A pino destination that keeps every line written to it, for tests that read what was logged. */
export function logLineCapture(): { lines: string[]; destination: Writable } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, destination };
}
