import { format } from 'node:util';
import { cac } from 'cac';
import packageJson from '../../package.json' with { type: 'json' };
import { canonicalArgv, declaredOptions, unknownOptionAsTyped, unmarkOptionValues } from './argv.ts';
import { registerBackfill } from './commands/backfill.ts';
import { registerLanes } from './commands/lanes.ts';
import { registerPurge } from './commands/purge.ts';
import { registerReconcile } from './commands/reconcile.ts';
import { registerReplay } from './commands/replay.ts';
import { registerRestore } from './commands/restore.ts';
import { registerShow } from './commands/show.ts';
import { registerStats } from './commands/stats.ts';
import { registerSweep } from './commands/sweep.ts';
import { registerVerify } from './commands/verify.ts';
import type { RunAction } from './commands/types.ts';
import { type CliRuntime, createCommandContext } from './context.ts';
import { exitCodes } from './exit-codes.ts';
import { failureOf, reportFailure } from './failure.ts';

/**
 * cac prints the help and the version with console.info, which is the process's stdout: sent to
 * runtime.stdout instead, so the answer goes where every other answer goes (a closed pipe is
 * handled the same way, and a caller in the same process captures it). Swapped only for the
 * synchronous call, so no other code sees console.info changed.
 */
function printingTo<T>(stdout: CliRuntime['stdout'], work: () => T): T {
  const original = console.info;
  console.info = (...args: unknown[]) => void stdout.write(`${format(...args)}\n`);
  try {
    return work();
  } finally {
    console.info = original;
  }
}

/**
 * `inboxctl <command>`: parses argv with cac, runs the command, and answers with an exit code
 * (see exit-codes.ts). Never calls process.exit, so tests and the bin share it.
 */
export async function runInboxctl(argv: string[], runtime: CliRuntime): Promise<number> {
  const cli = cac('inboxctl');
  // Every command takes --json; mri has read it by the time anything can fail, also for an unknown command or option.
  const json = () => cli.options.json === true;
  const usage = (message: string) => reportFailure(runtime, { exitCode: exitCodes.usage, code: 'usage', message }, json());
  let running: Promise<number> | undefined;
  const run: RunAction = (work) => {
    running = (async () => {
      try {
        return await work(createCommandContext(runtime));
      } catch (error) {
        return reportFailure(runtime, failureOf(error), json());
      }
    })();
    return running;
  };
  for (const register of [
    registerReplay,
    registerStats,
    registerPurge,
    registerRestore,
    registerShow,
    registerSweep,
    registerLanes,
    registerBackfill,
    registerVerify,
    registerReconcile,
  ])
    register(cli, run);
  cli.help();
  cli.version(packageJson.version);
  try {
    printingTo(runtime.stdout, () => cli.parse(['node', 'inboxctl', ...canonicalArgv(argv, declaredOptions(cli))], { run: false }));
    if (cli.options.help || cli.options.version) return exitCodes.ok;
    unmarkOptionValues(cli.options, [...cli.globalCommand.options, ...(cli.matchedCommand?.options ?? [])]);
    if (!cli.matchedCommand) {
      if (cli.args[0] !== undefined) return usage(`unknown command "${cli.args[0]}"; run \`inboxctl --help\` for the list.`);
      // The help is text: on a --json stdout it would be an answer no script can parse.
      if (json()) return usage('no command given; run `inboxctl --help` for the list.');
      // Bare `inboxctl` asks what it does: the help is the answer (exit 0), as git, docker and kubectl do.
      printingTo(runtime.stdout, () => cli.outputHelp());
      return exitCodes.ok;
    }
    cli.runMatchedCommand();
  } catch (error) {
    // cac's own complaints: unknown option, missing argument or option value.
    const message = unknownOptionAsTyped(error instanceof Error ? error.message : String(error), argv);
    return usage(`${message}; see \`inboxctl ${cli.matchedCommandName ?? ''} --help\`.`.replace('  --help', ' --help'));
  }
  return running ?? exitCodes.ok;
}
