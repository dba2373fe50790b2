// Mutation testing of the security decision code (StrykerJS 9, vitest
// runner). One group per run, so that each mutant runs only the tests meant
// to pin it down:
//
//   MUTATION_GROUP=next npx stryker run      (also: throttle, signup, passwords, teams, identification, decisions, lists, related)
//
// A group's files can be run one at a time while iterating:
//   MUTATION_GROUP=identification npx stryker run --mutate server/identification/matcher.ts
//
// The group's test files reach vitest through MUTATION_TESTS (read by
// vitest.mutation.config.ts), not through Stryker's own testFiles option,
// which activates module-level mutants too late (they always "survive").
// Reports go to reports/mutation/ and Stryker's scratch files to .stryker-tmp/
// (both git-ignored).
import { readFileSync } from 'node:fs';

/** The lines of `file` from the line containing `from` up to the one before `to` (null: to the end): one method. */
function lines(file, from, to) {
  const text = readFileSync(file, 'utf8').split('\n');
  const start = text.findIndex((l) => l.includes(from)) + 1;
  const end = to === null ? text.length - 1 : text.findIndex((l, i) => i >= start && l.includes(to));
  if (start === 0 || end === -1) throw new Error(`stryker.config.mjs: markers not found in ${file}`);
  return `${file}:${start}-${end}`;
}

const GROUPS = {
  next: { mutate: ['server/pages/next.ts'], tests: ['test/server/pages/next.test.ts'] },
  throttle: {
    mutate: ['server/accounts/throttle.ts', 'server/store/attempts.ts', lines('server/accounts/service.ts', 'async login(', 'private async startSession(')],
    tests: ['test/server/accounts/throttle.test.ts', 'test/server/maintenance.test.ts'],
  },
  signup: {
    mutate: ['server/accounts/signupPolicy.ts', 'server/accounts/admin.ts', lines('server/accounts/service.ts', 'async signup(', 'async login(')],
    tests: ['test/server/accounts/signup.test.ts', 'test/server/accounts/passwords.test.ts'],
  },
  passwords: { mutate: ['server/accounts/passwordPolicy.ts'], tests: ['test/server/accounts/passwords.test.ts'] },
  quota: {
    mutate: ['server/metering/leases.ts', 'server/store/leaseChain.ts', 'server/store/usage.ts'],
    tests: ['test/server/metering/quota.test.ts', 'test/server/accounts/usage.test.ts'],
  },
  caches: { mutate: ['server/store/ttlCache.ts'], tests: ['test/server/store/caches.test.ts'] },
  // Decisions: what a list value is, and what an ip list matches.
  lists: {
    mutate: ['server/decisions/listIndex.ts', 'server/decisions/listValues.ts'],
    tests: ['test/server/decisions/listIndex.test.ts', 'test/server/decisions/listValues.test.ts'],
  },
  // Teams: the role checks (the table and the auth middleware's session block) and the invitation logic.
  teams: {
    mutate: [
      'server/accounts/access.ts',
      'server/accounts/invitationToken.ts',
      lines('server/http/auth.ts', "case 'session':", '// A first-party proxy'),
      lines('server/accounts/members.ts', 'async invite(', 'async invitations('),
      lines('server/accounts/members.ts', 'async check(', null),
    ],
    tests: ['test/server/accounts/roles.test.ts', 'test/server/accounts/teams.test.ts'],
  },
  // Decision rules: the CEL engine's checks, cost bound and decide, and the view expressions see.
  decisions: {
    mutate: ['server/decisions/engine.ts', 'server/decisions/view.ts'],
    tests: ['test/server/decisions/engine.test.ts', 'test/server/decisions/view.test.ts'],
  },
  // Identification's decisions: the evidence model, the matcher's rules, the confidence map and the linker.
  identification: {
    mutate: ['server/identification/evidence.ts', 'server/identification/linker.ts', 'server/identification/matcher.ts', 'server/identification/confidence.ts'],
    tests: [
      'test/server/identification/evidence.test.ts',
      'test/server/identification/matcher.test.ts',
      'test/server/identification/confidence.test.ts',
      'test/server/identification/decisions.test.ts',
      'test/server/identification/linker.test.ts',
      'test/server/identification/record.test.ts',
      'test/server/identification/healing.test.ts',
      'test/server/identification/lookalikes.test.ts',
      'test/server/identification/identify.test.ts',
    ],
  },
  // Related visitors: the device key, the GPU's name across engines, the evidence, the crowd and the threshold.
  related: { mutate: ['server/identification/related.ts'], tests: ['test/server/identification/related.test.ts'] },
};

const group = GROUPS[process.env.MUTATION_GROUP ?? ''];
if (!group) throw new Error(`Set MUTATION_GROUP to one of: ${Object.keys(GROUPS).join(', ')}`);
process.env.MUTATION_TESTS = group.tests.join(',');

export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  mutate: group.mutate,
  coverageAnalysis: 'perTest',
  concurrency: 2,
  timeoutMS: 10_000,
  timeoutFactor: 2,
  reporters: ['clear-text', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${process.env.MUTATION_GROUP}.html` },
  jsonReporter: { fileName: `reports/mutation/${process.env.MUTATION_GROUP}.json` },
};
