import type { CAC } from 'cac';
import type { CommandContext } from '../context.ts';

/** How a command's action hands its work to the runner (which connects, times and maps errors to exit codes). */
export type RunAction = (work: (context: CommandContext) => Promise<number>) => Promise<number>;

export type Register = (cli: CAC, run: RunAction) => void;
