import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAllowedHosts, parseHost } from '../../src/web/allowed-hosts.ts';

describe('parseHost', () => {
  test('a name, an IPv4 or a bracketed IPv6 address, and an optional port; lower-cased', () => {
    assert.deepEqual(parseHost('Inbox.Internal:3000'), { name: 'inbox.internal', port: '3000' });
    assert.deepEqual(parseHost('[::1]:8080'), { name: '[::1]', port: '8080' });
    assert.deepEqual(parseHost('inbox_worker'), { name: 'inbox_worker', port: undefined });
  });

  test('nothing a URL parser would read as userinfo, a path or a second port', () => {
    for (const value of ['attacker.example@localhost', 'localhost/x', 'localhost:3000:80', '::1', '', 'localhost:', 'a b']) {
      assert.equal(parseHost(value), undefined, value);
    }
  });
});

describe('createAllowedHosts', () => {
  test('with nothing configured, only the loopback names, on any port', () => {
    const hosts = createAllowedHosts();
    for (const host of ['localhost', 'localhost:3000', '127.0.0.1:1', '[::1]:3000']) assert.equal(hosts.allowsHost(host), true, host);
    for (const host of [undefined, '127.0.0.2', '[::2]', 'localhost.example', '0.0.0.0:3000']) assert.equal(hosts.allowsHost(host), false, String(host));
  });

  test('INBOX_PUBLIC_URL on the scheme’s default port allows the bare name only', () => {
    const hosts = createAllowedHosts({ publicOrigin: 'https://ops.example.com' });
    assert.equal(hosts.allowsHost('ops.example.com'), true);
    assert.equal(hosts.allowsHost('ops.example.com:8443'), false);
    assert.equal(hosts.allowsOrigin('https://ops.example.com', 'inbox:3000'), true, 'its origin, whatever Host a proxy sent');
    assert.equal(hosts.allowsOrigin('https://ops.example.com:8443', 'ops.example.com'), false);
    assert.equal(hosts.allowsOrigin('ftp://localhost', 'localhost'), false);
  });

  test('an invalid INBOX_ALLOWED_HOSTS entry is a programming error (the config rejects it first)', () => {
    assert.throws(() => createAllowedHosts({ hosts: ['*.example.com'] }), /not a host name/);
  });
});
