// The layers, one way only (docs/architecture.md). `npm test` runs this.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No module may reach itself through its imports: a cycle fuses its files into one unit nobody can read alone.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'contract-imports-nothing-of-ours',
      severity: 'error',
      comment: 'The contract is the root every client, the server and the OpenAPI document derive from.',
      from: { path: '^contract/' },
      to: { path: '^(server|clients|openapi|test|bench|scripts)/' },
    },
    {
      name: 'clients-import-only-the-contract',
      severity: 'error',
      comment: 'The published packages carry no server code: a client may use the contract and the other client packages.',
      from: { path: '^clients/' },
      to: { path: '^(server|openapi|test|bench|scripts)/' },
    },
    {
      name: 'store-below-the-modules',
      severity: 'error',
      comment: 'server/store is the only door to MongoDB and knows nothing of what is built on it.',
      from: { path: '^server/store/' },
      to: {
        path: '^server/(identification|risk|routes|http|pages|visitors|events|search|explorer|deletion|webhooks|sealing|deviceflow|accounts|keys|projects|metering|edge)/',
      },
    },
    {
      name: 'routes-never-import-the-store',
      severity: 'error',
      comment: 'Routes are thin: they call services (server/services.ts), never the database.',
      from: { path: '^server/routes/' },
      to: { path: '^server/store/' },
    },
    {
      name: 'zxcvbn-only-in-the-password-worker',
      severity: 'error',
      comment: 'zxcvbn holds ~50 MB: the server loads it in the worker thread of accounts/passwordChecker.ts only, never in a process that identifies.',
      from: { path: '^server/', pathNot: '^server/accounts/(passwordWorker|passwordPolicy)\\.ts$' },
      to: { path: '(^server/accounts/passwordPolicy\\.ts$|@zxcvbn-ts)' },
    },
    {
      name: 'server-does-not-import-tests-or-benchmarks',
      severity: 'error',
      from: { path: '^(server|contract|clients)/' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules|\\.devdb|\\.data|test-results|reports|\\.stryker-tmp)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.mjs', '.js', '.json'],
    },
  },
};
