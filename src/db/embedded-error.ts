import { CodedError } from '../errors.ts';
export type EmbeddedDatabaseFailure =
  | 'embedded_binaries_missing'
  | 'embedded_command_failed'
  | 'embedded_os_user_missing'
  | 'embedded_unreachable'
  | 'embedded_cluster_not_ours'
  | 'embedded_folder_unusable';

/**
 * The development database could not be set up or started. The message is written for the person
 * who typed `npm start`: what failed, where, and what to do; entry points print it without a stack.
 */
export class EmbeddedDatabaseError extends CodedError {
  readonly code: EmbeddedDatabaseFailure;
  constructor(code: EmbeddedDatabaseFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
