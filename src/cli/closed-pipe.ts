import type { Writable } from 'node:stream';
import type { CliOutput } from './context.ts';

/**
 * stdout or stderr as a CliOutput that ends quietly when its reader goes away (`inboxctl show …
 * | head`): the write that meets the closed pipe fails with EPIPE, which Node reports as an
 * 'error' event; unhandled, it printed a stack trace. From then on writes are dropped and
 * `closed` is true, so a command that streams (restore --print) can stop. The exit code stays the
 * command's own: the reader chose to stop reading, which is no failure of the command, and
 * `stats … | head` still says whether something needs attention.
 */
export function closedPipeSafe(stream: Writable): CliOutput {
  let readerGone = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    readerGone = true;
  });
  // The failed write marks the stream destroyed at once; the 'error' event comes a tick later.
  const closed = () => readerGone || stream.destroyed;
  return {
    write: (chunk) => (closed() ? false : stream.write(chunk)),
    get closed() {
      return closed();
    },
  };
}
