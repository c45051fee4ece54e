import { type ParsedConfig, type ReadFile, parseConfig } from './config.ts';
import { ConfigError } from '../errors.ts';
import { type ConfiguredProvider, createConfiguredProviders } from './configured-providers.ts';

/** The configuration a process runs with: what parseConfig read, its providers built. */
export interface AppConfig extends Omit<ParsedConfig, 'providers'> {
  providers: ReadonlyMap<string, ConfiguredProvider>;
}

/**
 * Reads the whole configuration once, at start: parse, then build the providers. Pure apart from
 * `readFile`: every problem of both steps is collected and thrown together as one ConfigError,
 * so a bad deploy is fixed in one round.
 */
export function loadConfig(env: Record<string, string | undefined>, readFile: ReadFile): AppConfig {
  const parsed = parseConfig(env, readFile);
  const problems = parsed.ok ? [] : [...parsed.problems];
  const providers = createConfiguredProviders((parsed.ok ? parsed.config.providers : parsed.providers).values(), problems);
  if (!parsed.ok || problems.length > 0) throw new ConfigError(problems);
  return { ...parsed.config, providers };
}
