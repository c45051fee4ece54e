#!/usr/bin/env node
// The `inboxctl` bin (package.json). Node >= 22.18 / 24 runs this TypeScript directly.
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { closedPipeSafe } from '../src/cli/closed-pipe.ts';
import { runInboxctl } from '../src/cli/inboxctl.ts';

const code = await runInboxctl(process.argv.slice(2), {
  env: process.env,
  readFile: (path) => readFileSync(path, 'utf8'),
  stdout: closedPipeSafe(process.stdout),
  stderr: closedPipeSafe(process.stderr),
  now: () => new Date(),
  // A container's uid may have no passwd entry (userInfo throws): the uid is still someone.
  user: () => {
    try {
      return userInfo().username;
    } catch {
      return process.env.USER ?? `uid ${process.getuid?.() ?? 'unknown'}`;
    }
  },
});
process.exitCode = code;
