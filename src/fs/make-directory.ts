import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code;

/**
 * `mkdir -p`, without Node's `mkdir(…, { recursive: true })`: that one never returns (sync or not,
 * Node 20 and 24) for a folder on a filesystem that answers ENOENT to mkdir while the parent
 * exists, such as /proc (`--archive /proc/x` spun a core forever). Here each missing folder is made
 * on its own, from the deepest one that exists down, so such a refusal is an error like any other.
 * Answers the folders that were missing, outermost first (made here, or meanwhile by another process).
 */
export async function makeDirectory(dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    const found = await stat(current).catch((error: unknown) => {
      if (codeOf(error) === 'ENOENT') return undefined;
      throw error;
    });
    if (found) {
      if (!found.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, '${current}'`), { code: 'ENOTDIR', path: current });
      break;
    }
    missing.push(current);
    if (path.dirname(current) === current) break;
  }
  missing.reverse();
  for (const folder of missing) {
    // Another process may make the same folder meanwhile: that is what was asked.
    await mkdir(folder).catch((error: unknown) => {
      if (codeOf(error) !== 'EEXIST') throw error;
    });
  }
  return missing;
}
