import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type PostgresBinaries, binariesCopiedInto, binariesReachableBy, copyBinaries, packagedBinaries } from './embedded-binaries.ts';
import { EmbeddedDatabaseError } from './embedded-error.ts';
import { type ClusterUser, userCanReach } from './embedded-process.ts';
import { makeDirectory } from '../fs/make-directory.ts';

/** Where a root-started cluster lives when the `postgres` user cannot reach the checkout: root-owned, searchable by all. */
export const DEFAULT_RELOCATION_DIR = '/var/lib/webhook-inbox';

/** In the checkout's data folder (INBOX_DATA_DIR): says where its cluster was moved to. */
export const LOCATION_RECORD = 'embedded-postgres.json';

export interface EmbeddedLocation {
  /** The cluster's data directory, absolute. */
  dataDir: string;
  binaries: PostgresBinaries;
  /** Set when the cluster lives outside the checkout: the folder holding its data and binaries. */
  relocatedTo?: string;
}

interface LocationRecord {
  home: string;
  /** The data folder (INBOX_DATA_DIR, absolute) the home belongs to; also in `<home>/owner.txt`. */
  owner: string;
  createdAt: string;
}

function readRecord(base: string): LocationRecord | undefined {
  const file = path.join(base, LOCATION_RECORD);
  if (!existsSync(file)) return undefined;
  const record = JSON.parse(readFileSync(file, 'utf8')) as Partial<LocationRecord>;
  if (typeof record.home !== 'string')
    throw new EmbeddedDatabaseError('embedded_unreachable', `${file} does not name the folder of this checkout's embedded PostgreSQL ("home").`);
  return record as LocationRecord;
}

/**
 * Where this checkout's cluster is, without creating anything (inboxctl asks this): the folder the
 * record names, else `<INBOX_DATA_DIR>/pg` with the binaries under node_modules.
 */
export async function findEmbeddedLocation(baseDir: string): Promise<EmbeddedLocation> {
  const base = path.resolve(baseDir);
  const record = readRecord(base);
  const packaged = await packagedBinaries();
  if (!record) return { dataDir: path.join(base, 'pg'), binaries: packaged };
  return { dataDir: path.join(record.home, 'pg'), binaries: binariesCopiedInto(record.home, packaged), relocatedTo: record.home };
}

/** initdb has run there. */
export function isInitialised(dataDir: string): boolean {
  return existsSync(path.join(dataDir, 'PG_VERSION'));
}

/** `<checkout folder name>-<random>`: readable in `ls`, and a fresh clone (or a deleted .inbox) never inherits old data. */
function checkoutId(base: string): string {
  const name =
    path
      .basename(path.dirname(base))
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .slice(0, 40) || 'checkout';
  return `${name}-${randomBytes(4).toString('hex')}`;
}

async function makeSearchable(dir: string): Promise<void> {
  await makeDirectory(dir);
  // Explicit: a umask of 077 would otherwise leave the folder closed to the cluster's user.
  await chmod(dir, 0o755);
}

async function relocate(base: string, relocationDir: string, user: ClusterUser): Promise<EmbeddedLocation> {
  const home = path.join(relocationDir, checkoutId(base));
  await makeSearchable(relocationDir);
  await makeSearchable(home);
  // For whoever cleans /var/lib up: which checkout this was (the folder outlives a deleted checkout).
  await writeFile(path.join(home, 'owner.txt'), `${base}\n`);
  // The record first: a start cut short later finds and completes this home instead of making another.
  const record: LocationRecord = { home, owner: base, createdAt: new Date().toISOString() };
  await writeFile(path.join(base, LOCATION_RECORD), `${JSON.stringify(record, null, 2)}\n`);
  const binaries = await copyBinaries(await packagedBinaries(), home);
  if (!(await userCanReach(user, [binaries.postgres, home]))) {
    throw new EmbeddedDatabaseError(
      'embedded_unreachable',
      `The \`${user.name}\` OS user cannot reach ${home} either: make ${relocationDir} searchable (chmod 755), or set DATABASE_URL.`,
    );
  }
  return { dataDir: path.join(home, 'pg'), binaries, relocatedTo: home };
}

/**
 * Where the service's cluster runs, made ready. As root the cluster runs as `postgres`. When that
 * user can enter the data folder but not node_modules, the binaries are copied into the data folder.
 * When it cannot enter the data folder either (a checkout under /root, or in a `mktemp -d` folder),
 * binaries and data go to `<relocationDir>/<id>/`, recorded in the data folder. The checkout's own
 * permissions are never changed.
 */
export async function prepareEmbeddedLocation(
  baseDir: string,
  user: ClusterUser | undefined,
  relocationDir = DEFAULT_RELOCATION_DIR,
): Promise<EmbeddedLocation> {
  const base = path.resolve(baseDir);
  await makeDirectory(base).catch((error: unknown) => {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new EmbeddedDatabaseError(
      'embedded_folder_unusable',
      `Cannot make ${base}, the embedded PostgreSQL's folder (INBOX_DATA_DIR): ${reason}. Point INBOX_DATA_DIR at a folder this user can create, or set DATABASE_URL.`,
      { cause: error },
    );
  });
  const location = await findEmbeddedLocation(base);
  if (!user) return location;
  if (location.relocatedTo) return { ...location, binaries: await copyBinaries(await packagedBinaries(), location.relocatedTo) };
  if (await userCanReach(user, [base])) return { ...location, binaries: await binariesReachableBy(user, base) };
  if (isInitialised(location.dataDir)) {
    throw new EmbeddedDatabaseError(
      'embedded_unreachable',
      `The embedded PostgreSQL in ${location.dataDir} runs as the \`${user.name}\` OS user, who cannot enter ${base}. Move the checkout (or INBOX_DATA_DIR) somewhere that user can enter, or set DATABASE_URL.`,
    );
  }
  return relocate(base, relocationDir, user);
}
