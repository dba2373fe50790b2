// Fuzzing the decision engine (server/decisions/engine.ts) with fast-check:
// random and adversarial text (deep nesting, huge literals, unicode with
// lone surrogates and bidirectional controls, soups of CEL tokens) never
// makes checkExpression throw, and its answers stay quick (counted and
// printed; only a runaway fails the test, a loaded machine being no bug);
// well-formed random rules that pass the check never make decide throw.
// A call over SLOW_MS is timed again: the fastest of three is the input's
// own cost, the first call's excess a pause of the machine (GC, JIT, other
// processes), which no input reproduces.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { RULE_EXPRESSION_MAX, RULE_FIELDS } from '../../../contract/ruleFields.js';
import { checkExpression, CompiledRuleset, type ListLookup, type RuleError } from '../../../server/decisions/engine.js';
import { decisionView } from '../../../server/decisions/view.js';
import type { EventDoc } from '../../../server/store/events.js';

const SLOW_MS = 10;
const RUNAWAY_MS = 1_000;
const timings: number[] = [];
/** Calls over SLOW_MS: the first call's time, the fastest of three more, the text. */
const slowest: [number, number, string][] = [];

const timed = (text: string) => {
  const started = performance.now();
  return [checkExpression(text), performance.now() - started] as const;
};

function timedCheck(text: string): RuleError | null {
  const [answer, took] = timed(text);
  timings.push(took);
  if (took > SLOW_MS) {
    const own = Math.min(...[0, 1, 2].map(() => timed(text)[1]));
    slowest.push([took, own, `${JSON.stringify(text.slice(0, 50))}… (${text.length} characters)`]);
  }
  return answer;
}

function expectWellFormed(text: string, answer: RuleError | null): void {
  if (answer === null) return;
  expect(typeof answer.message).toBe('string');
  expect(answer.offset).toBeGreaterThanOrEqual(0);
  expect(answer.offset).toBeLessThanOrEqual(text.length);
  expect(answer.line).toBeGreaterThanOrEqual(1);
  expect(answer.column).toBeGreaterThanOrEqual(1);
}

afterAll(() => {
  const sorted = [...timings].sort((a, b) => a - b);
  const own = slowest.map(([, ms]) => ms);
  console.log(
    `checkExpression: ${sorted.length} calls, median ${sorted[sorted.length >> 1]?.toFixed(2)} ms, p99 ${sorted[Math.floor(sorted.length * 0.99)]?.toFixed(2)} ms, max ${sorted.at(-1)?.toFixed(2)} ms; ${slowest.length} over ${SLOW_MS} ms, of which ${own.filter((ms) => ms > SLOW_MS).length} at their fastest of three (max ${Math.max(0, ...own).toFixed(2)} ms)`,
    ...slowest
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([first, fastest, text]) => `\n  ${first.toFixed(1)} ms, then ${fastest.toFixed(1)} ms: ${text}`),
  );
  expect(Math.max(0, ...own)).toBeLessThan(RUNAWAY_MS);
});

const TOKENS = [
  ...RULE_FIELDS.map((f) => f.path),
  ...'( ) [ ] { } . , : ? ! - + * / % < > == != <= >= && || in'.split(' '),
  'true',
  'false',
  'null',
  '0',
  '1',
  '-1',
  '1.5',
  '1e308',
  '1e-400',
  '0x7fffffffffffffff',
  '9223372036854775808',
  '18446744073709551615u',
  "'x'",
  '"VPN_DETECTED"',
  "r'\\d+'",
  "b'\\xff'",
  '"""a"""',
  "'",
  '"',
  '\\',
  '//',
  '\n',
  'inList',
  'cidr',
  'size',
  'has',
  '.exists',
  '.all',
  '.map',
  '.filter',
  '.exists_one',
  '.matches',
  '.startsWith',
  '.contains',
  'cel.bind',
  'int',
  'double',
  'string',
  'dyn',
  'type',
  'timestamp',
  '__proto__',
  'constructor',
  'prototype',
  '\u202E',
  '\uD800',
  '\uDC00',
  '😀',
  'ä',
];

const tokenSoup = fc.array(fc.constantFrom(...TOKENS), { maxLength: 60 }).map((t) => t.join(' '));
const unicodeText = fc.string({ unit: 'binary', maxLength: 300 });
const repeated = (piece: fc.Arbitrary<string>, max: number) => fc.tuple(piece, fc.integer({ min: 1, max })).map(([p, k]) => p.repeat(k));
const adversarial = fc.oneof(
  repeated(fc.constantFrom('(', '[', '{', '!', '-', '(!', '[(', 'size(', 'riskFactors.exists(x, ', '.a', '["a"]', 'true ? ', '"'), 10_000),
  fc.integer({ min: 1, max: 5_000 }).map((k) => `${'('.repeat(k)}true${')'.repeat(k)}`),
  fc.integer({ min: 1, max: 4_100 }).map((k) => `${'9'.repeat(k)} > suspectScore`),
  fc.integer({ min: 1, max: 4_100 }).map((k) => `${'9'.repeat(k)}.${'9'.repeat(k)} > confidence`),
  fc.integer({ min: 1, max: 4_100 }).map((k) => `userAgent == '${'a'.repeat(k)}'`),
  fc.integer({ min: 1, max: 700 }).map((k) => `userAgent == '${'\\u0041'.repeat(k)}'`),
  fc.integer({ min: 1, max: 1_400 }).map((k) => `ipLocation.country in [${Array(k).fill("'a'").join(',')}]`),
  fc.integer({ min: 1, max: 1_400 }).map((k) => Array(k).fill('newVisitor').join(' || ')),
  fc.integer({ min: 1, max: 400 }).map((k) => Array(k).fill("userAgent.matches('x')").join(' || ')),
  fc.integer({ min: 1, max: 1_000 }).map((k) => `${'riskFactors.exists(f, '.repeat(k)}true${')'.repeat(k)}`),
  fc.string({ unit: 'grapheme', maxLength: 200 }).map((s) => `userAgent.matches('${s.replace(/'/g, '')}')`),
  fc.string({ unit: 'binary', maxLength: 100 }).map((s) => `"${s}" == userAgent\u202E && \u2066true\u2069`),
);

describe('checkExpression on random and adversarial text', () => {
  it('never throws, and places every error inside the text', () => {
    fc.assert(
      fc.property(fc.oneof(unicodeText, tokenSoup, adversarial), (text) => {
        expectWellFormed(text, timedCheck(text));
      }),
      { numRuns: 1_500 },
    );
  });

  it('refuses whatever is longer than the limit, at the limit', () => {
    fc.assert(
      fc.property(fc.string({ minLength: RULE_EXPRESSION_MAX + 1, maxLength: RULE_EXPRESSION_MAX + 50 }), (text) => {
        expect(timedCheck(text)).toMatchObject({ offset: RULE_EXPRESSION_MAX });
      }),
      { numRuns: 50 },
    );
  });
});

// ---- Well-formed random rules over the view.

const ints = RULE_FIELDS.filter((f) => f.type === 'int').map((f) => f.path);
const doubles = RULE_FIELDS.filter((f) => f.type === 'double').map((f) => f.path);
const strings = RULE_FIELDS.filter((f) => f.type === 'string').map((f) => f.path);
const bools = RULE_FIELDS.filter((f) => f.type === 'bool').map((f) => f.path);
const literal = (s: string) => `'${s.replace(/[\\']/g, '')}'`;

const rules = fc.letrec<{ bool: string; int: string; str: string }>((tie) => ({
  int: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(...ints),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
    fc.tuple(tie('int'), fc.constantFrom('+', '-', '*', '/', '%'), tie('int')).map(([a, op, b]) => `(${a} ${op} ${b})`),
    tie('str').map((s) => `size(${s})`),
    fc.constantFrom('int(tag.n)', 'int(confidence * 100.0)'),
  ),
  str: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(...strings),
    fc.string({ unit: 'grapheme', maxLength: 12 }).map(literal),
    fc.tuple(tie('str'), tie('str')).map(([a, b]) => `(${a} + ${b})`),
    tie('str').map((s) => `${s}.lowerAscii()`),
    tie('int').map((i) => `string(${i})`),
    fc.constantFrom('riskFactors[0]', 'string(tag.plan)'),
  ),
  bool: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(...bools, 'true', 'false', 'has(tag.plan)'),
    tie('bool').map((b) => `!${b}`),
    fc.tuple(tie('bool'), fc.constantFrom('&&', '||', '==', '!='), tie('bool')).map(([a, op, b]) => `(${a} ${op} ${b})`),
    fc.tuple(tie('int'), fc.constantFrom('<', '<=', '>', '>=', '==', '!='), tie('int')).map(([a, op, b]) => `${a} ${op} ${b}`),
    fc
      .tuple(fc.constantFrom(...doubles), fc.constantFrom('<', '>'), fc.double({ noNaN: true, noDefaultInfinity: true }))
      .map(([a, op, d]) => `${a} ${op} ${Number.isInteger(d) ? `${d}.0` : d}`),
    fc
      .tuple(tie('str'), fc.constantFrom('==', '<', 'startsWith', 'endsWith', 'contains', 'in'), tie('str'))
      .map(([a, op, b]) => (op === '==' || op === '<' ? `${a} ${op} ${b}` : op === 'in' ? `${a} in [${b}, 'x']` : `${a}.${op}(${b})`)),
    fc.tuple(tie('str'), fc.constantFrom('a+', '(?i)chrome', '^/check', '[0-9]{2,3}', '(a|b)*c$', '\\\\d')).map(([s, p]) => `${s}.matches('${p}')`),
    fc.tuple(fc.string({ maxLength: 8 }), tie('str')).map(([l, s]) => `inList(${literal(l)}, ${s})`),
    fc.tuple(fc.string({ maxLength: 8 }), tie('int')).map(([l, i]) => `inList(${literal(l)}, ${i})`),
    fc.tuple(tie('str'), fc.constantFrom('10.0.0.0/8', '2001:db8::/32', '::ffff:0:0/96', 'x/1', '1.2.3.4/99')).map(([s, r]) => `cidr(${s}, '${r}')`),
    tie('bool').map((b) => `riskFactors.exists(f, f == 'VPN_DETECTED' && ${b})`),
    fc.tuple(tie('bool'), tie('bool'), tie('bool')).map(([c, a, b]) => `(${c} ? ${a} : ${b})`),
    fc.constantFrom('tag.n > 2', "tag.plan == 'pro'", "'a' in tag.items", 'tag.items[5] == 1', 'int(tag.plan) > 0'),
  ),
})).bool;

function randomView(seed: number, tagJson: string | null, userAgent: string) {
  return decisionView({
    event: {
      _id: `req_${seed}`,
      visitorId: `vis_${seed % 7}`,
      confidence: (seed % 100) / 100,
      botProbability: (seed % 37) / 37,
      suspectScore: seed % 101,
      riskFactors: seed % 2 ? ['VPN_DETECTED'] : [],
      verdicts: { bot: { result: seed % 3 === 0, kind: 'bad', probability: 0.5 }, velocity: { events: { '5m': seed % 5, '1h': seed % 50, '24h': seed } } },
      ip: seed % 2 ? '10.1.2.3' : '2001:db8::1',
      ipLocation: { country: 'DE' },
      url: `https://a.example/check/${seed}`,
      referrer: '',
      tagJson,
      linkedId: null,
      timestamp: seed,
    } as unknown as EventDoc,
    client: { userAgent: { userAgent, brands: [] } as never },
    server: null,
    visitCount: seed % 4,
    firstSeenAt: 0,
    linkedIdVouched: seed % 2 === 0,
  });
}

const tags = fc.oneof(
  fc.constant(null),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc
    .record({
      plan: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
      n: fc.oneof(fc.double(), fc.string()),
      items: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 8 }),
    })
    .map((t) => JSON.stringify(t)),
);

describe('decide on random rules', () => {
  it('never throws, and lists each rule that checks as matched, not matched or errored', () => {
    const lists: ListLookup = { has: (_list, value) => String(value).length % 2 === 0 };
    let checked = 0;
    fc.assert(
      fc.property(
        fc.array(rules, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        tags,
        fc.string({ unit: 'grapheme', maxLength: 80 }),
        (expressions, seed, tagJson, userAgent) => {
          for (const e of expressions) expectWellFormed(e, timedCheck(e));
          const passing = expressions.filter((e) => checkExpression(e) === null);
          checked += passing.length;
          const set = new CompiledRuleset(passing.map((expression, i) => ({ id: `t${i}`, expression, action: 'block', enabled: true, mode: 'test' })));
          const d = set.decide(randomView(seed, tagJson, userAgent), lists);
          expect(d.ruleId).toBeNull();
          expect(new Set([...d.testMatches, ...d.errored]).size).toBe(d.testMatches.length + d.errored.length);
          for (const id of [...d.testMatches, ...d.errored]) expect(id).toMatch(/^t\d+$/);
        },
      ),
      { numRuns: 400 },
    );
    // The generator must produce rules that pass, or this tests nothing.
    expect(checked).toBeGreaterThan(200);
  });
});
