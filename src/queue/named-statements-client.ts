import { createHash } from 'node:crypto';
import pg from 'pg';

/** Beyond this many distinct texts on one connection, statements go unnamed: a text built with values inlined must not grow the server's memory without end. */
const MAX_NAMED_PER_CONNECTION = 256;
/** One query, no `;`: a prepared statement holds exactly one (pg-boss's maintenance sends several in one text). */
const SINGLE_QUERY = /^\s*(?:with|select|insert|update|delete)\b[^;]*$/i;

/**
 * node-postgres's client for pg-boss's pool, sending pg-boss's statements as named prepared
 * statements. pg-boss sends them unnamed, so PostgreSQL parses and plans each one at every call:
 * its fetch (no parameters at all: the queue is inlined) cost ~0.7 ms of planning per call, its
 * completion ~0.4 ms, about a sixth of PostgreSQL's time per forwarded event. Named, a statement
 * without parameters is planned once per connection, and one with parameters settles on a generic
 * plan where PostgreSQL finds it no worse (bench/README.md#where-the-time-goes).
 * pg-boss hands its constructor options to node-postgres's Pool, which takes `Client` from them.
 */
export class NamedStatementsClient extends pg.Client {
  readonly #named = new Set<string>();

  // pg's query() has a dozen overloads; this one only renames a plain-text query and passes everything on.
  override query(...args: unknown[]): never {
    const [text, values, callback] = args;
    if (typeof text === 'string' && typeof values !== 'function' && SINGLE_QUERY.test(text)) {
      const name = `pgboss_${createHash('sha1').update(text).digest('base64url')}`;
      if (this.#named.has(name) || this.#named.size < MAX_NAMED_PER_CONNECTION) {
        this.#named.add(name);
        return (super.query as (...rest: unknown[]) => never)({ name, text }, values, callback);
      }
    }
    return (super.query as (...rest: unknown[]) => never)(...args);
  }
}
