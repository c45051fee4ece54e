import { open } from 'node:fs/promises';
import path from 'node:path';
import { makeDirectory } from './make-directory.ts';

/**
 * fsyncs a folder: the names made, renamed or removed in it survive a crash. A file's own fsync
 * makes its bytes durable, not its name; a new folder's name is in its parent.
 */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * makeDirectory, durably: each folder that was missing is fsynced into its parent before this
 * returns, so what is written into it next cannot lose its folder in a crash. A folder another
 * process made meanwhile is synced too: that one may not have got so far.
 */
export async function makeDurableDirectory(dir: string): Promise<void> {
  for (const folder of await makeDirectory(dir)) await syncDirectory(path.dirname(folder));
}
