import assert from 'node:assert/strict';
import fsPromises, { mkdtemp, rm } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { createArchiveWriter, readArchive } from '../../src/operations/archive.ts';

// Found by review: an archive written into a folder made for it fsynced the file and the file's
// folder, but not the new folders' own names in their parents, so a crash after the rows' DELETE
// committed could take the folder, and the archive in it, away. A crash cannot be staged in a
// test; what can be seen is which paths are fsynced before append returns (the rows are deleted
// only after it returns). The real fs does the work: `open` is only watched, through Node's own
// hook for builtin modules (syncBuiltinESMExports), which every module's imported `open` follows.

let root: string;
const synced: string[] = [];
const realOpen = fsPromises.open;

before(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'inbox-archive-durability-'));
  fsPromises.open = (async (...args: Parameters<typeof realOpen>) => {
    const handle = await realOpen(...args);
    const sync = handle.sync.bind(handle);
    handle.sync = async () => {
      await sync();
      synced.push(path.resolve(String(args[0])));
    };
    return handle;
  }) as typeof realOpen;
  syncBuiltinESMExports();
});

afterEach(() => {
  synced.length = 0;
});

after(async () => {
  fsPromises.open = realOpen;
  syncBuiltinESMExports();
  if (root) await rm(root, { recursive: true, force: true });
});

const event = (id: number) => ({
  v: 1 as const,
  id,
  provider: 'stripe',
  event_id: `evt_${id}`,
  event_type: 'charge.succeeded',
  resource_id: null,
  status: 'processed' as const,
  attempts: 1,
  last_error: null,
  occurred_at: '2024-01-01T10:00:00.000000Z',
  received_at: '2024-01-01T10:00:00.000000Z',
  processed_at: null,
  payload_json: '{}',
  raw_body_base64: Buffer.from('{}').toString('base64'),
});

describe('an archive is durable before append returns', () => {
  test('into folders that did not exist: the file, its folder, and each new folder in its parent are fsynced', async () => {
    const cold = path.join(root, 'cold');
    const file = path.join(cold, 'stripe', 'stripe-2024-01-01.jsonl.gz');
    await createArchiveWriter({ clock: () => new Date() }).append(file, [event(1)]);
    assert.deepEqual(
      [...synced].sort(),
      [root, cold, path.dirname(file), file].sort(),
      'fsynced: the file, stripe/ (its name), cold/ (stripe/), the root (cold/)',
    );
    const read = [];
    for await (const archived of readArchive(file)) read.push(archived.id);
    assert.deepEqual(read, [1]);
  });

  test('appending to a file that exists syncs the file alone: its name is durable already', async () => {
    const file = path.join(root, 'cold', 'stripe', 'stripe-2024-01-01.jsonl.gz');
    await createArchiveWriter({ clock: () => new Date() }).append(file, [event(2)]);
    assert.deepEqual(synced, [file]);
  });
});
