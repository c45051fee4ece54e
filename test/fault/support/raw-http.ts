import { connect } from 'node:net';

export interface RawRequest {
  port: number;
  path: string;
  headers: Record<string, string | number>;
  /** Written one after another; `delayMs` between them makes a slow drip. */
  chunks: Buffer[];
  delayMs?: number;
  /** Close the connection after the chunks without ending the body (a sender that dies mid-body). */
  abortAfterChunks?: boolean;
}

/** What came back: a status, or `no_response` when the connection ended without one. */
export type RawOutcome = number | 'no_response';

/**
 * One HTTP/1.1 request written on a bare socket, for what fetch and node:http will not do: send
 * fewer bytes than the Content-Length, stream a chunked body without one, drip a byte at a time,
 * and still read the status a server sends before it hangs up on a body it refused (node:http's
 * client reports the EPIPE and loses the 413 that preceded it).
 */
export function rawRequest(options: RawRequest): Promise<RawOutcome> {
  const chunked = String(options.headers['transfer-encoding'] ?? '').toLowerCase() === 'chunked';
  const head = [`POST ${options.path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...Object.entries(options.headers).map(([k, v]) => `${k}: ${v}`)];
  return new Promise((resolve) => {
    const socket = connect(options.port, '127.0.0.1');
    let received = '';
    let settled = false;
    const finish = (outcome: RawOutcome) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(outcome);
    };
    socket.on('data', (data: Buffer) => {
      received += data.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(received);
      if (status) finish(Number(status[1]));
    });
    socket.on('error', () => {});
    socket.on('close', () => finish('no_response'));
    const write = (data: Buffer | string) =>
      new Promise<void>((done) => {
        if (socket.destroyed || settled) return done();
        socket.write(data, () => done());
      });
    void (async () => {
      await write(`${head.join('\r\n')}\r\n\r\n`);
      for (const chunk of options.chunks) {
        if (settled || socket.destroyed) return;
        await write(chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk);
        if (options.delayMs) await new Promise((wait) => setTimeout(wait, options.delayMs));
      }
      if (options.abortAfterChunks) socket.destroy();
      else if (chunked) await write('0\r\n\r\n');
    })();
  });
}
