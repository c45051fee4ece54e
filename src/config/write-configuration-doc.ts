/**
 * `npm run docs:config`: writes the generated sections of docs/configuration.md (the environment
 * and INBOX_CONFIG's keys) from the zod schemas the service parses its configuration with, and
 * keeps the hand-written prose around them. An entry point, like src/main.ts:
 * test/config/configuration-doc.test.ts fails when the committed page is not what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { type GeneratedSection, configurationReference } from './configuration-reference.ts';

export const CONFIGURATION_DOC_PATH = 'docs/configuration.md';
export const CONFIGURATION_DOC_COMMAND = 'npm run docs:config';

const begin = (section: GeneratedSection) =>
  `<!-- generated: ${section} (${CONFIGURATION_DOC_COMMAND}; the meanings live beside the zod schemas in src/config/) -->`;
const end = (section: GeneratedSection) => `<!-- end generated: ${section} -->`;

/** The page with each generated section replaced; the markers must be there, once each, in order. */
export function withGeneratedSections(page: string, sections: Record<GeneratedSection, string>): string {
  let text = page;
  for (const [section, markdown] of Object.entries(sections) as [GeneratedSection, string][]) {
    const [from, to] = [text.indexOf(begin(section)), text.indexOf(end(section))];
    if (from === -1 || to < from || text.indexOf(begin(section), from + 1) !== -1) {
      throw new Error(`${CONFIGURATION_DOC_PATH} must hold the line ${begin(section)} once, and after it ${end(section)}`);
    }
    text = `${text.slice(0, from)}${begin(section)}\n\n${markdown}\n\n${text.slice(to)}`;
  }
  return text;
}

function main(): number {
  const { sections, problems } = configurationReference();
  try {
    if (problems.length > 0) throw new Error(problems.join('\n  '));
    writeFileSync(CONFIGURATION_DOC_PATH, withGeneratedSections(readFileSync(CONFIGURATION_DOC_PATH, 'utf8'), sections));
  } catch (error) {
    console.error(`${CONFIGURATION_DOC_PATH} not written:\n  ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  console.log(`wrote ${CONFIGURATION_DOC_PATH}`);
  return 0;
}

if (import.meta.main) process.exitCode = main();
