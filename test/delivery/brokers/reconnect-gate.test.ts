import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createReconnectGate } from '../../../src/delivery/brokers/reconnect-gate.ts';
import { routingToken } from '../../../src/delivery/brokers/broker-message.ts';

/** A connect that fails or succeeds as the test says, counting its calls; each call waits for the test to settle it. */
function scriptedConnect() {
  const calls: { resolve: (value: string) => void; reject: (error: Error) => void }[] = [];
  return {
    calls,
    connect: () => new Promise<string>((resolve, reject) => calls.push({ resolve, reject })),
  };
}

test('lanes that need a connection at once share one attempt, and its outcome', async () => {
  const script = scriptedConnect();
  const gate = createReconnectGate({ connect: script.connect, now: () => 0 });
  const opened = [gate.open(), gate.open(), gate.open()];
  assert.equal(script.calls.length, 1);
  script.calls[0]!.resolve('connection');
  assert.deepEqual(await Promise.all(opened), ['connection', 'connection', 'connection']);
});

test('after a failed attempt none is made before its backoff ends (each open fails at once with the cause); then one is, and a success resets the backoff', async () => {
  const script = scriptedConnect();
  let now = 0;
  const gate = createReconnectGate({ connect: script.connect, now: () => now, delaySeconds: 1, maxDelaySeconds: 10 });
  const first = gate.open();
  script.calls[0]!.reject(new Error('connect ECONNREFUSED 127.0.0.1:5672'));
  await assert.rejects(first, { code: 'broker_unreachable', message: 'connection failed: connect ECONNREFUSED 127.0.0.1:5672' });
  // The first backoff is 1 s × (1..2).
  now = 900;
  await assert.rejects(gate.open(), /connection failed: connect ECONNREFUSED 127\.0\.0\.1:5672 \(next attempt in [\d.]+ s\)/);
  assert.equal(script.calls.length, 1, 'no attempt during the backoff');
  now = 2_000;
  const second = gate.open();
  script.calls[1]!.reject(new Error('still refused'));
  await assert.rejects(second);
  // Two failures in a row: 2 s × (1..2), so still closed 1.9 s after the second failure.
  now = 3_900;
  await assert.rejects(gate.open(), /next attempt in/);
  now = 6_001;
  const third = gate.open();
  script.calls[2]!.resolve('back');
  assert.equal(await third, 'back');
  const fourth = gate.open();
  assert.equal(script.calls.length, 4, 'after a success the next attempt (a lost connection) is made at once');
  script.calls[3]!.resolve('again');
  assert.equal(await fourth, 'again');
});

test('a routing token keeps letters, digits, - and _, and escapes every other byte, so no two names share one', () => {
  assert.equal(routingToken('pi_3QabcDEF-12'), 'pi_3QabcDEF-12');
  assert.equal(routingToken('a.b c*d>e%'), 'a%2Eb%20c%2Ad%3Ee%25');
  assert.equal(routingToken('ação'), 'a%C3%A7%C3%A3o');
  assert.notEqual(routingToken('a.b'), routingToken('a%2Eb'));
});
