/**
 * The Dockerfile's steps, run on this machine as an image build and `docker run` would run them,
 * for machines with no Docker engine (test/deployment/container.system.test.ts). The container's
 * file system is a folder: every path of the image (WORKDIR, COPY destinations, the absolute paths
 * a RUN names) lives under `root`. RUN steps run as root, anything after `USER node` as the official
 * node image's user (uid and gid 1000) when the test runs as root, on the Node that runs the test.
 */
import { chown, copyFile, cp, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type ExitedProcess, runUntilExit } from './service-process.ts';

export interface Instruction {
  keyword: string;
  /** The rest of the line, continuations joined. */
  args: string;
}

/** Instructions in order; comments dropped, `\` continuations joined. */
export function parseDockerfile(text: string): Instruction[] {
  const joined = text.replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [keyword, ...rest] = line.split(/\s+/);
      return { keyword: keyword!.toUpperCase(), args: rest.join(' ') };
    });
}

/** HEALTHCHECK's and CMD's exec form (a JSON array), after any --options. */
export function execForm(args: string): string[] {
  const json = args.slice(args.indexOf('['));
  const parsed: unknown = JSON.parse(json);
  if (!Array.isArray(parsed) || !parsed.every((part) => typeof part === 'string')) throw new Error(`not an exec form: ${args}`);
  return parsed;
}

/** The official node image's `node` user. */
const NODE_USER = { uid: 1000, gid: 1000 };

export interface Container {
  root: string;
  /** WORKDIR, under root. */
  workdir: string;
  env: Record<string, string>;
  /** The ids after USER node (undefined: as whoever runs the test). */
  user: { uid: number; gid: number } | undefined;
  cmd: string[];
  healthcheck: string[];
}

/** A command in the container, as its current user (root while building, `node` after USER node). */
export function runIn(container: Container, command: string[], options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<ExitedProcess> {
  return runUntilExit(command[0]!, command.slice(1), {
    cwd: container.workdir,
    env: { ...container.env, ...options.env },
    timeoutMs: options.timeoutMs,
    ...container.user,
  });
}

/** A RUN line's absolute image paths, moved under root (only the prefixes the image uses). */
function rooted(command: string, root: string): string {
  return command.replace(/(^|[\s"'=])(\/(?:app|usr\/local\/bin)(?=[\s/"']|$))/g, (_match, before: string, imagePath: string) => `${before}${root}${imagePath}`);
}

/**
 * Builds the "image" under `root` from `dockerfile` (COPY sources read from `context`), with
 * `node` (the Node that runs the test, Node 24) put where the official image has it. `env` adds
 * to every RUN (npm's offline preference, say), not to the image.
 */
export async function buildImage(options: { dockerfile: string; context: string; root: string; buildEnv?: Record<string, string> }): Promise<Container> {
  const { root, context } = options;
  const bin = path.join(root, 'usr/local/bin');
  await mkdir(bin, { recursive: true });
  await copyFile(process.execPath, path.join(bin, 'node'));
  const asRoot = process.getuid?.() === 0;
  const home = path.join(root, 'home/node');
  await mkdir(home, { recursive: true });
  if (asRoot) await chown(home, NODE_USER.uid, NODE_USER.gid);
  const container: Container = { root, workdir: root, env: { PATH: `${bin}:/usr/bin:/bin`, HOME: home }, user: undefined, cmd: [], healthcheck: [] };
  for (const { keyword, args } of parseDockerfile(options.dockerfile)) {
    switch (keyword) {
      case 'FROM':
      case 'EXPOSE':
        break;
      case 'WORKDIR':
        container.workdir = path.join(root, args);
        await mkdir(container.workdir, { recursive: true });
        break;
      case 'ENV': {
        const [name, ...value] = args.split('=');
        container.env[name!] = value.join('=');
        break;
      }
      case 'COPY': {
        const parts = args.split(/\s+/);
        const destination = path.resolve(container.workdir, parts.at(-1)!.startsWith('/') ? path.join(root, parts.at(-1)!) : parts.at(-1)!);
        for (const source of parts.slice(0, -1)) {
          const target = parts.length > 2 || parts.at(-1)!.endsWith('/') ? path.join(destination, path.basename(source)) : destination;
          await cp(path.join(context, source), target, { recursive: true });
        }
        break;
      }
      case 'RUN': {
        const done = await runIn(container, ['sh', '-c', rooted(args, root)], { env: options.buildEnv, timeoutMs: 10 * 60_000 });
        if (done.code !== 0) throw new Error(`RUN ${args} exited ${done.code}:\n${done.stdout}\n${done.stderr}`);
        break;
      }
      case 'USER':
        if (args !== 'node') throw new Error(`USER ${args}: only the node image's own user is known here`);
        container.user = asRoot ? NODE_USER : undefined;
        break;
      case 'HEALTHCHECK':
        container.healthcheck = execForm(args);
        break;
      case 'CMD':
        container.cmd = execForm(args);
        break;
      default:
        throw new Error(`${keyword}: an instruction this runner does not know; teach it (test/support/dockerfile.ts)`);
    }
  }
  return container;
}
