import assert from 'node:assert/strict';
import { type AddressInfo, type Socket, createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { postEvent } from '../../src/delivery/post-event.ts';
import { signWebhook, signingKey } from '../../src/delivery/sign.ts';
import { newDestinationSecret } from './support/lanes.ts';

/** What the destination writes back once it has read the whole request: raw bytes, then how it leaves the connection. */
type Answer = { bytes: string; afterwards: 'stall' | 'reset' | 'close' | 'trickle' };

const secret = newDestinationSecret();
const id = '0193a0c4-6a8e-7d2b-9f7e-1c2d3e4f5a6b';
const body = JSON.stringify({ id, type: 'payment.paid', sequence: 1 });
let answer: Answer;
let url: string;
let verified = 0;
const sockets = new Set<Socket>();

/** A destination written at the socket level, so an answer can stop or stall at any byte. It verifies each request with the official package. */
const server = createServer((socket) => {
  sockets.add(socket);
  socket.on('error', () => {});
  let received = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    received = Buffer.concat([received, chunk]);
    const end = received.indexOf('\r\n\r\n');
    if (end < 0) return;
    const headers = Object.fromEntries(
      received
        .subarray(0, end)
        .toString('latin1')
        .split('\r\n')
        .slice(1)
        .map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    if (received.length < end + 4 + Number(headers['content-length'])) return;
    new Webhook(secret).verify(received.subarray(end + 4).toString('utf8'), headers);
    verified += 1;
    socket.write(answer.bytes);
    if (answer.afterwards === 'reset') setTimeout(() => socket.resetAndDestroy(), 20);
    if (answer.afterwards === 'close') setTimeout(() => socket.end(), 20);
    if (answer.afterwards === 'trickle') {
      const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write('x')), 100);
    }
  });
});

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/payment-events`;
});
after(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

async function post(answered: Answer) {
  answer = answered;
  return postEvent({ url, headers: signWebhook([signingKey(secret)], id, new Date(), body), body, timeoutMs: 1000 });
}

describe('an answer whose status arrived but whose body did not finish: the status decides', () => {
  test('a 200 whose body is cut short by a reset is delivered (it was not "connection failed")', async () => {
    assert.deepEqual(await post({ bytes: 'HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial', afterwards: 'reset' }), { kind: 'delivered', status: 200 });
  });

  test('a 200 whose body trickles past the timeout is delivered (it was not "no answer")', async () => {
    assert.deepEqual(await post({ bytes: 'HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n', afterwards: 'trickle' }), { kind: 'delivered', status: 200 });
  });

  test('a 200 whose body ends early with a clean close is delivered, as before', async () => {
    assert.deepEqual(await post({ bytes: 'HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial', afterwards: 'close' }), { kind: 'delivered', status: 200 });
  });

  test('a 410 whose body stalls still disables: it is gone', async () => {
    assert.deepEqual(await post({ bytes: 'HTTP/1.1 410 Gone\r\ncontent-length: 100\r\n\r\n', afterwards: 'stall' }), { kind: 'gone', status: 410 });
  });

  test('a 503 whose body stalls fails with its status, what it said and its Retry-After, and says the body did not finish', async () => {
    const result = await post({ bytes: 'HTTP/1.1 503 Service Unavailable\r\nretry-after: 30\r\ncontent-length: 100\r\n\r\nbusy', afterwards: 'stall' });
    assert.deepEqual(result, { kind: 'failed', status: 503, error: 'HTTP 503: busy (the answer stopped: no end within 1000 ms)', retryAfter: '30' });
  });

  test('no status at all is still no answer', async () => {
    assert.deepEqual(await post({ bytes: '', afterwards: 'stall' }), { kind: 'failed', status: null, error: 'no answer within 1000 ms', retryAfter: null });
    assert.deepEqual(await post({ bytes: '', afterwards: 'reset' }), {
      kind: 'failed',
      status: null,
      error: 'connection failed (ECONNRESET)',
      retryAfter: null,
    });
    assert.equal(verified, 7, 'every request reached the destination and verified');
  });
});
