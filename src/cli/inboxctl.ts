import { cac } from 'cac';
import packageJson from '../../package.json' with { type: 'json' };
import { withoutQueryText } from '../error-redaction.ts';
import { describeError } from '../errors.ts';
import { ArchiveFormatError, OperationIncompleteError, OperationRefusedError } from '../operations/errors.ts';
import { canonicalArgv, declaredOptions, unknownOptionAsTyped, unmarkOptionValues } from './argv.ts';
import { registerBackfill } from './commands/backfill.ts';
import { registerLanes } from './commands/lanes.ts';
import { registerPurge } from './commands/purge.ts';
import { registerReplay } from './commands/replay.ts';
import { registerRestore } from './commands/restore.ts';
import { registerShow } from './commands/show.ts';
import { registerStats } from './commands/stats.ts';
import { registerSweep } from './commands/sweep.ts';
import { registerVerify } from './commands/verify.ts';
import type { RunAction } from './commands/types.ts';
import { type CliRuntime, createCommandContext } from './context.ts';
import { blamesTheDatabase } from '../refetch/database-blame.ts';
import { CliError, type ExitCode, exitCodes } from './exit-codes.ts';

/** Turns whatever a command threw into one line on stderr and the documented exit code; never the SQL of a failed statement. */
function exitCodeFor(thrown: unknown): { code: ExitCode; message: string } {
  const error = withoutQueryText(thrown);
  if (error instanceof CliError) return { code: error.exitCode, message: error.message };
  if (error instanceof OperationRefusedError) return { code: exitCodes.usage, message: `refused, nothing changed: ${error.message}` };
  if (blamesTheDatabase(error)) return { code: exitCodes.database, message: `database unreachable: ${describeError(error)}` };
  if ((error as { code?: unknown }).code === 'ENOENT') return { code: exitCodes.usage, message: describeError(error) };
  if (error instanceof OperationIncompleteError || error instanceof ArchiveFormatError) return { code: exitCodes.failed, message: error.message };
  return { code: exitCodes.failed, message: `failed: ${describeError(error)}` };
}

/**
 * `inboxctl <command>`: parses argv with cac, runs the command, and answers with an exit code
 * (see exit-codes.ts). Never calls process.exit, so tests and the bin share it.
 */
export async function runInboxctl(argv: string[], runtime: CliRuntime): Promise<number> {
  const cli = cac('inboxctl');
  let running: Promise<number> | undefined;
  const run: RunAction = (work) => {
    running = (async () => {
      try {
        return await work(createCommandContext(runtime));
      } catch (error) {
        const { code, message } = exitCodeFor(error);
        runtime.stderr.write(`inboxctl: ${message}\n`);
        return code;
      }
    })();
    return running;
  };
  for (const register of [registerReplay, registerStats, registerPurge, registerRestore, registerShow, registerSweep, registerLanes, registerBackfill, registerVerify]) register(cli, run);
  cli.help();
  cli.version(packageJson.version);
  try {
    cli.parse(['node', 'inboxctl', ...canonicalArgv(argv, declaredOptions(cli))], { run: false });
    if (cli.options.help || cli.options.version) return exitCodes.ok;
    unmarkOptionValues(cli.options);
    if (!cli.matchedCommand) {
      if (cli.args[0] !== undefined) runtime.stderr.write(`inboxctl: unknown command "${cli.args[0]}"; run \`inboxctl --help\` for the list.\n`);
      else cli.outputHelp();
      return exitCodes.usage;
    }
    cli.runMatchedCommand();
  } catch (error) {
    // cac's own complaints: unknown option, missing argument or option value.
    const message = unknownOptionAsTyped(error instanceof Error ? error.message : String(error), argv);
    runtime.stderr.write(`inboxctl: ${message}; see \`inboxctl ${cli.matchedCommandName ?? ''} --help\`.\n`.replace('  --help', ' --help'));
    return exitCodes.usage;
  }
  return running ?? exitCodes.ok;
}
