import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const checkout = path.resolve(import.meta.dirname, '../..');
// Run by this Node (24), not by whatever `node` the bin's shebang finds first on the PATH.
const depcruise = path.join(checkout, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');
const config = path.join(checkout, '.dependency-cruiser.cjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

/** dependency-cruiser with the project's rules, run in `cwd`: every violation it found. */
async function violationsIn(cwd: string, folders: string[]): Promise<Violation[]> {
  // It exits non-zero when it finds violations; the JSON report is on stdout either way.
  const { stdout } = await run(process.execPath, [depcruise, ...folders, '--config', config, '--output-type', 'json'], {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: { stdout?: string; stderr?: string }) => {
    if (!error.stdout) throw error;
    return { stdout: error.stdout };
  });
  return (JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

const describeAll = (violations: Violation[]) => violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).join('\n');

test('src/ has no import circle, no arrow up a layer and no face importing another; test/ and bench/ keep to their rules (.dependency-cruiser.cjs)', async () => {
  const violations = await violationsIn(checkout, ['src', 'bin', 'test', 'bench']);
  assert.deepEqual(violations, [], `\n${describeAll(violations)}`);
});

test('the check finds an upward arrow, a sideways one between faces, a circle, a folder without a layer, gateway folders importing one another, src/ importing a test, and test/ and bench/ reaching past their support', async () => {
  const scratch = await mkdtemp(path.join(tmpdir(), 'layers-'));
  const files: Record<string, string> = {
    'src/queue/boss.ts': "import { app } from '../http/app.ts';\nexport const boss = app;\n",
    'src/http/app.ts': "import { run } from '../cli/run.ts';\nexport const app = run;\n",
    'src/cli/run.ts': 'export const run = 1;\n',
    'src/db/client.ts': "import { schema } from './schema.ts';\nexport const client = schema;\n",
    'src/db/schema.ts': "import type { client } from './client.ts';\nexport const schema = 1 as unknown as typeof client;\n",
    'src/outbox/send.ts': "import { client } from '../db/client.ts';\nexport const send = client;\n",
    'src/gateways/shared/json-body.ts': 'export const parse = 1;\n',
    'src/gateways/stripe/webhook-driver.ts': "import { parse } from '../shared/json-body.ts';\nexport const stripe = parse;\n",
    'src/gateways/stripe/index.ts': "import { stripe } from './webhook-driver.ts';\nexport const stripeGateway = stripe;\n",
    'src/gateways/acme/webhook-driver.ts': "import { stripe } from '../stripe/webhook-driver.ts';\nexport const acme = stripe;\n",
    'src/gateways/shared/amounts.ts': "import { acme } from '../acme/webhook-driver.ts';\nexport const amounts = acme;\n",
    'src/gateways/registry.ts': "import { stripeGateway } from './stripe/index.ts';\nexport const gateways = [stripeGateway];\n",
    'src/inbox/store.ts': "import { waitFor } from '../../test/support/wait.ts';\nexport const store = waitFor;\n",
    'test/support/wait.ts': 'export const waitFor = 1;\n',
    'test/inbox/harness.ts': 'export const harness = 1;\n',
    'test/inbox/store.test.ts':
      "import { harness } from './harness.ts';\nimport { runIngest } from '../../bench/scenarios/ingest.ts';\nimport { levels } from '../../bench/support/levels.ts';\nexport const used = [harness, runIngest, levels];\n",
    'test/inbox/replay.test.ts': "import { used } from './store.test.ts';\nexport const again = used;\n",
    'test/inbox/store.system.test.ts': "await import('./store.test.ts');\n",
    'bench/support/levels.ts': 'export const levels = 1;\n',
    'bench/scenarios/ingest.ts':
      "import { waitFor } from '../../test/support/wait.ts';\nimport { harness } from '../../test/inbox/harness.ts';\nexport const runIngest = [waitFor, harness];\n",
  };
  try {
    for (const [file, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(scratch, file)), { recursive: true });
      await writeFile(path.join(scratch, file), text);
    }
    const found = (await violationsIn(scratch, ['src', 'test', 'bench'])).map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
    assert.deepEqual(found, [
      // bench/ may use test/support/ and test/ may use bench/support/: those arrows are not here.
      'bench-imports-test-support-only: bench/scenarios/ingest.ts → test/inbox/harness.ts',
      // A circle is reported once, at the edge where it is found; this one closes with a type-only import.
      'gateway-folders-apart: src/gateways/acme/webhook-driver.ts → src/gateways/stripe/webhook-driver.ts',
      'gateway-shared-knows-no-gateway: src/gateways/shared/amounts.ts → src/gateways/acme/webhook-driver.ts',
      'no-circular: src/db/client.ts → src/db/schema.ts',
      'no-importing-a-test-file: test/inbox/replay.test.ts → test/inbox/store.test.ts',
      'sideways-in-faces: src/http/app.ts → src/cli/run.ts',
      'src-imports-no-test-or-bench: src/inbox/store.ts → test/support/wait.ts',
      'test-imports-bench-support-only: test/inbox/store.test.ts → bench/scenarios/ingest.ts',
      'unlayered: src/outbox/send.ts → src/db/client.ts',
      'upward-from-queue: src/queue/boss.ts → src/http/app.ts',
    ]);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
});
