import { before } from 'node:test';

let last: Promise<unknown> = Promise.resolve();

/**
 * A `before` hook that runs after every `setup` registered before it has finished. node:test starts
 * a file-level `before` the moment it is registered (the root test is already running), so two of
 * them run at once: the service would start before its database exists. Setup that depends on the
 * database or the service goes through here; once one step fails, the later ones fail with it.
 */
export function setup(fn: () => Promise<unknown> | unknown): void {
  before(() => {
    const run = last.then(() => fn());
    last = run;
    return run;
  });
}
