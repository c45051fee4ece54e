import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Consumer {
  url: string;
  secret: string;
  answeredAt: Map<string, number>;
  counts: { repeats: number; unverified: number };
  close(): Promise<void>;
}

/** A local application: verifies every request with `standardwebhooks`, answers 204, notes when. */
export async function startConsumer(): Promise<Consumer> {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const webhook = new Webhook(secret);
  const answeredAt = new Map<string, number>();
  const counts = { repeats: 0, unverified: 0 };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        webhook.verify(Buffer.concat(chunks).toString('utf8'), request.headers as Record<string, string>);
      } catch {
        counts.unverified += 1;
        response.writeHead(401).end();
        return;
      }
      const id = String(request.headers['webhook-id']);
      if (answeredAt.has(id)) counts.repeats += 1;
      else answeredAt.set(id, Date.now());
      response.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    secret,
    answeredAt,
    counts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function waitUntil(done: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
}
