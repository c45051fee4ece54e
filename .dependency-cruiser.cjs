/**
 * Also checked over test/ and bench/, which sit beside src/ rather than in a layer: they may import
 * any of src/, src/ and bin/ import neither, and the two share only their support folders (the
 * rules after the layers'). The layers of src/, bottom to top. A module imports from its own layer or below, never above;
 * the members of an `isolated` layer do not import one another either (the faces: each is a way
 * in, built on the layers below, mounted or run by the composition root). Checked by
 * test/architecture/layers.test.ts, so a new upward arrow fails `npm test`. A new folder of src/
 * needs a place here first (the `unlayered` rule).
 */
const layers = [
  // Shared by everything: typed errors and what of an error may be shown, the logger, text formats, folders on disk, the web names and request env.
  { name: 'foundation', paths: ['^src/errors\\.ts$', '^src/error-redaction\\.ts$', '^src/logger\\.ts$', '^src/log-output\\.ts$', '^src/format/', '^src/fs/', '^src/web/'] },
  { name: 'db', paths: ['^src/db/'] },
  // Payments: facts, fold, state machine. No HTTP, no queue.
  { name: 'domain', paths: ['^src/domain/'] },
  // One folder per gateway (webhook driver, API mapping, event list), the code they share in
  // shared/, and registry.ts listing them. Pure: no database, no sockets, no clock of its own.
  { name: 'gateways', paths: ['^src/gateways/'] },
  // Re-reading a charge through a gateway's API: HTTP, rate limit, breaker, and the ordering
  // settings (the `api`/`ordering` keys of INBOX_CONFIG and what they resolve to).
  { name: 'refetch', paths: ['^src/refetch/'] },
  // Reconciling payments against the money the gateways settled: their ledgers read through the
  // refetch layer's GET (rate limit, breaker), stored in PostgreSQL, matched against the payments
  // by their gateway keys, and what differs recorded as findings. Knows no queue, no face and no
  // configuration file: the cron job, inboxctl, the API and the dashboard above call it.
  { name: 'reconciliation', paths: ['^src/reconciliation/'] },
  // The environment and INBOX_CONFIG, parsed once, and the providers a process runs with built
  // from them: a driver from the gateway registry, refetch settings resolved. Above gateways and
  // refetch because building a provider needs both; below everything that runs with the result.
  { name: 'config', paths: ['^src/config/'] },
  // pg-boss: queues, jobs inserted inside the caller's transaction.
  { name: 'queue', paths: ['^src/queue/'] },
  // Storing a webhook request's event with its job in one transaction.
  { name: 'inbox', paths: ['^src/inbox/'] },
  // What the application is told: the payment event contract, and pushing it to destinations.
  { name: 'delivery', paths: ['^src/delivery/'] },
  // Applying stored events; the operators' jobs (sweep, retention, replay, purge).
  { name: 'work', paths: ['^src/processing/', '^src/operations/'], isolated: true },
  // One metrics registry composed from what each subsystem declares in its own metrics.ts: above
  // every layer that declares some, below the faces and the root that serve and pass it.
  { name: 'observability', paths: ['^src/observability/'] },
  { name: 'faces', paths: ['^src/http/', '^src/api/', '^src/cli/', '^src/dashboard/'], isolated: true },
  // The composition root: the only modules that know every layer.
  { name: 'root', paths: ['^src/service\\.ts$', '^src/main\\.ts$', '^bin/'] },
];

const either = (paths) => paths.join('|');

const upward = layers.flatMap((layer, index) => {
  const above = layers.slice(index + 1).flatMap((l) => l.paths);
  if (above.length === 0) return [];
  return [
    {
      name: `upward-from-${layer.name}`,
      comment: `${layer.name} imports only from its own layer or below`,
      severity: 'error',
      from: { path: either(layer.paths) },
      to: { path: either(above) },
    },
  ];
});

const sideways = layers
  .filter((layer) => layer.isolated)
  .flatMap((layer) =>
    layer.paths.map((member) => ({
      name: `sideways-in-${layer.name}`,
      comment: `the members of ${layer.name} (${layer.paths.join(', ')}) do not import one another`,
      severity: 'error',
      from: { path: member },
      to: { path: either(layer.paths.filter((other) => other !== member)) },
    })),
  );

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-circular', comment: 'no import circle, however long', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'unlayered',
      comment: 'every module of src/ belongs to a layer of .dependency-cruiser.cjs',
      severity: 'error',
      from: { path: '^src/', pathNot: either(layers.flatMap((l) => l.paths)) },
      to: {},
    },
    { name: 'not-to-unresolvable', comment: 'an import that resolves to nothing', severity: 'error', from: {}, to: { couldNotResolve: true } },
    ...upward,
    ...sideways,
    {
      name: 'gateway-folders-apart',
      comment: 'a gateway folder imports only itself, src/gateways/shared/ and the layers below: adding or removing a gateway touches its folder and the registry line',
      severity: 'error',
      from: { path: '^src/gateways/([^/]+)/', pathNot: '^src/gateways/shared/' },
      to: { path: '^src/gateways/', pathNot: ['^src/gateways/$1/', '^src/gateways/shared/'] },
    },
    {
      name: 'src-imports-no-test-or-bench',
      comment: 'src/ and bin/ ship; test/ and bench/ do not: what both need lives in src/',
      severity: 'error',
      from: { path: '^(src|bin)/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'bench-imports-test-support-only',
      comment: "bench/ may reuse test/'s support folders (a private cluster, a pooler, waitFor), never a test or a suite's harness",
      severity: 'error',
      from: { path: '^bench/' },
      to: { path: '^test/', pathNot: '/support/' },
    },
    {
      name: 'test-imports-bench-support-only',
      comment: "test/ may import bench/support/ (to test the bench's own helpers), never a scenario or the runner",
      severity: 'error',
      from: { path: '^test/' },
      to: { path: '^bench/', pathNot: '^bench/support/' },
    },
    {
      name: 'no-importing-a-test-file',
      comment:
        'a *.test.ts file is run, not imported: what two tests share goes in a support module. A dynamic import runs it on purpose (a .system.test.ts running its fast twin at full strength)',
      severity: 'error',
      from: {},
      to: { path: '\\.test\\.ts$', dependencyTypesNot: ['dynamic-import'] },
    },
    {
      name: 'gateway-shared-knows-no-gateway',
      comment: 'src/gateways/shared/ is what several gateways use; it names none of them',
      severity: 'error',
      from: { path: '^src/gateways/shared/' },
      to: { path: '^src/gateways/', pathNot: '^src/gateways/shared/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are arrows too: a type two layers share lives in the lower one.
    tsPreCompilationDeps: true,
    moduleSystems: ['es6'],
    // Resolve packages as Node does (their `exports`), so a missing one is told from a present one.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'node', 'default', 'types'], mainFields: ['module', 'main', 'types'] },
  },
};
