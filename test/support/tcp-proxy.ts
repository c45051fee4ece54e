import { type Server, type Socket, connect, createServer } from 'node:net';
import { freePort } from './free-port.ts';

export interface TcpProxy {
  /** Where clients connect: refused until open(), then forwarded to the target. */
  port: number;
  open(): Promise<void>;
  /** Stops listening and cuts every forwarded connection. */
  close(): Promise<void>;
}

/**
 * A port of the test's own in front of a real server: closed at first (a client's connect is
 * refused, as by a broker that is down), forwarding byte for byte once opened. It lets a test take
 * a shared broker "down" for its own client only.
 */
export async function closedProxyTo(target: { host: string; port: number }): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  return {
    port,
    async open() {
      server = createServer((client) => {
        const upstream = connect(target.port, target.host);
        track(client);
        track(upstream);
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      await new Promise<void>((resolve, reject) => server!.once('error', reject).listen(port, '127.0.0.1', resolve));
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
    },
  };
}
