// The tests' one way to pick a port: the same probe the embedded cluster uses (bind port 0, read it, close).
export { freePort } from '../../src/db/embedded-cluster.ts';
