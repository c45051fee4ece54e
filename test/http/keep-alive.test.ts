import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { useTestDatabase } from '../support/database.ts';
import { useService } from '../support/service.ts';

const database = useTestDatabase();
const service = useService({ database, env: { INBOX_ROLE: 'receiver', WEBHOOK_SECRET_STRIPE: 'whsec_keep_alive_test' } });

/**
 * A load balancer keeps its connections to the service open between requests (AWS's ALB for 60 s)
 * and sends the next request on one whenever it likes. Node closes an idle connection after 5 s by
 * default, so a request sent as it closed was lost in flight: the balancer answered the gateway 502.
 */
test('an idle keep-alive connection is still open 6 s later and serves the next request on it', async () => {
  const socket = connect(Number(new URL(service.baseUrl).port), '127.0.0.1');
  let received = '';
  let closedAt: number | undefined;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('close', () => (closedAt = performance.now()));
  const request = 'GET /healthz HTTP/1.1\r\nHost: inbox.test\r\nConnection: keep-alive\r\n\r\n';
  const answers = () => received.match(/HTTP\/1\.1 200 /g)?.length ?? 0;
  try {
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(request);
    while (answers() < 1) await sleep(10);
    const idleFrom = performance.now();
    await sleep(6_000);
    assert.equal(closedAt, undefined, `the service closed the idle connection after ${closedAt === undefined ? 0 : Math.round(closedAt - idleFrom)} ms`);
    socket.write(request);
    while (answers() < 2 && closedAt === undefined) await sleep(10);
    assert.equal(answers(), 2, 'the second request was answered on the same connection');
  } finally {
    socket.destroy();
  }
});
