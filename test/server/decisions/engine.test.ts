// Decision rules' CEL engine (server/decisions/engine.ts): what an
// expression may say (checked when saved, with positions), how a ruleset
// decides (first live match, every test rule, errors skipped and counted),
// and the functions rules call.
import { describe, expect, it, vi } from 'vitest';
import { RULE_EXPRESSION_MAX, RULE_FIELDS, RULE_FUNCTIONS, type RuleAction } from '../../../contract/ruleFields.js';
import { RE2JS } from '@bufbuild/re2';
import { LIMITS } from '../../../contract/identify.js';
import {
  checkExpression,
  cidr,
  CompiledRuleset,
  COST,
  COST_MAX,
  NESTING_MAX,
  PATTERN_MAX,
  PATTERNS_MAX,
  patternSize,
  runnableExpression,
  type ListLookup,
  type RuleInput,
  worstCase,
} from '../../../server/decisions/engine.js';
import { decisionView, VIEW_FACTOR_MAX, VIEW_LIST_MAX, VIEW_STRING_MAX, VIEW_USER_AGENT_MAX, type DecisionView } from '../../../server/decisions/view.js';
import type { EventDoc } from '../../../server/store/events.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

function view(over: Partial<EventDoc> = {}, userAgent = CHROME): DecisionView {
  const event = {
    _id: 'req_1',
    visitorId: 'vis_1',
    confidence: 0.9,
    botProbability: 0.2,
    suspectScore: 40,
    riskFactors: ['VPN_DETECTED', 'INCOGNITO'],
    verdicts: {
      bot: { result: false, probability: 0.2, kind: 'human' },
      vpn: { result: true, confidence: 0.8 },
      velocity: { events: { '5m': 2, '1h': 9, '24h': 30 } },
    },
    ip: '203.0.113.9',
    ipLocation: { country: 'DE' },
    url: 'https://shop.example/checkout/pay',
    referrer: '',
    tagJson: '{"plan":"pro","n":3,"items":["a","b"]}',
    linkedId: null,
    timestamp: 1_700_000_000_000,
    ...over,
  } as EventDoc;
  return decisionView({
    event,
    client: { userAgent: { userAgent, brands: [] } as never },
    server: null,
    visitCount: 2,
    firstSeenAt: 1,
    linkedIdVouched: false,
  });
}

const NO_LISTS: ListLookup = { has: () => false };

let n = 0;
const rule = (expression: string, over: Partial<RuleInput> = {}): RuleInput => ({
  id: `r${++n}`,
  expression,
  action: 'block',
  enabled: true,
  mode: 'live',
  ...over,
});
const decide = (rules: RuleInput[], v = view(), lists = NO_LISTS) => new CompiledRuleset(rules).decide(v, lists);
/** Whether one expression matches the view. */
const matches = (expression: string, v = view(), lists = NO_LISTS) => {
  expect(checkExpression(expression), expression).toBeNull();
  const d = decide([rule(expression)], v, lists);
  expect(d.errored, expression).toEqual([]);
  return d.ruleId !== null;
};

describe('decide', () => {
  it('takes the first enabled live rule that matches, and no later live rule runs', () => {
    const has = vi.fn(() => true);
    const rules = [rule('suspectScore > 90'), rule('suspectScore > 30', { action: 'challenge' }), rule("inList('l', ip)"), rule("int('x') > 0")];
    expect(decide(rules, view(), { has })).toEqual({ ruleId: rules[1]!.id, action: 'challenge', testMatches: [], errored: [] });
    expect(has).not.toHaveBeenCalled();
  });

  it('decides nothing when no live rule matches', () => {
    expect(decide([rule('suspectScore > 90'), rule('newVisitor')])).toEqual({ ruleId: null, action: null, testMatches: [], errored: [] });
    expect(decide([])).toEqual({ ruleId: null, action: null, testMatches: [], errored: [] });
  });

  it('runs every enabled test rule, before and after the deciding one, and lists those that match in order', () => {
    const rules = [
      rule('true', { mode: 'test' }),
      rule('false', { mode: 'test' }),
      rule('suspectScore == 40', { action: 'review' }),
      rule('verdicts.vpn.result', { mode: 'test' }),
      rule('true', { mode: 'test', action: 'allow' }),
    ];
    expect(decide(rules)).toEqual({ ruleId: rules[2]!.id, action: 'review', testMatches: [rules[0]!.id, rules[3]!.id, rules[4]!.id], errored: [] });
  });

  it('never acts on a test rule', () => {
    const rules = [rule('true', { mode: 'test', action: 'block' })];
    expect(decide(rules)).toMatchObject({ ruleId: null, action: null, testMatches: [rules[0]!.id] });
  });

  it('never runs a disabled rule', () => {
    const has = vi.fn(() => true);
    const rules = [rule("inList('l', ip)", { enabled: false }), rule("int('x') > 0", { enabled: false }), rule('true', { enabled: false, mode: 'test' })];
    expect(decide(rules, view(), { has })).toEqual({ ruleId: null, action: null, testMatches: [], errored: [] });
    expect(has).not.toHaveBeenCalled();
  });

  it('skips a rule whose evaluation fails, lists it, and goes on', () => {
    const rules = [
      rule("int('x') > 0"),
      rule('tag.missing == 1', { mode: 'test' }),
      rule("tag.plan > 2 || int('y') > 0", { mode: 'test' }),
      rule('suspectScore > 10', { action: 'allow' }),
      rule("int('z') > 0", { mode: 'test' }),
    ];
    expect(decide(rules)).toEqual({
      ruleId: rules[3]!.id,
      action: 'allow',
      testMatches: [],
      errored: [rules[0]!.id, rules[1]!.id, rules[2]!.id, rules[4]!.id],
    });
  });

  it('lists a rule that does not answer a bool, or does not check at all, as errored on every decision', () => {
    const rules = [rule('suspectScore + 1'), rule('tag.plan'), rule('suspectScore >'), rule('true', { action: 'challenge' })];
    const set = new CompiledRuleset(rules);
    for (let i = 0; i < 2; i++)
      expect(set.decide(view(), NO_LISTS)).toEqual({ ruleId: rules[3]!.id, action: 'challenge', testMatches: [], errored: rules.slice(0, 3).map((r) => r.id) });
  });

  it('never throws, even on a view missing its parts', () => {
    const rules = [rule('verdicts.bot.result'), rule("userAgent.matches('x')"), rule('suspectScore > 1', { mode: 'test' })];
    // A missing int is 0.
    expect(new CompiledRuleset(rules).decide({} as DecisionView, NO_LISTS)).toEqual({
      ruleId: null,
      action: null,
      testMatches: [],
      errored: [rules[0]!.id, rules[1]!.id],
    });
    const lists = {
      has: () => {
        throw new Error('lists down');
      },
    };
    expect(decide([rule("inList('l', ip)")], view(), lists).errored).toHaveLength(1);
  });

  it('gives each rule the parts of the view it reads, whatever the other rules read', () => {
    const rules = [
      rule('has(tag.plan) && verdicts.vpn.result && velocity.events.h1 == 9 && tag.n == 3.0', { mode: 'test' }),
      rule('suspectScore == 40', { mode: 'test' }),
    ];
    expect(decide(rules).testMatches).toEqual(rules.map((r) => r.id));
    expect(decide([rule("has(verdicts.vpn.result) && ipLocation.country == 'DE'", { mode: 'test' })]).testMatches).toHaveLength(1);
  });

  it('reads nested fields however they are written, and a macro’s variable over a field of the same name', () => {
    // Compiled rules read nested fields as variables of their own: whitespace, comments, has() and matches() around them change nothing.
    expect(matches("verdicts . vpn // a comment\n .result && ipLocation.country.matches('^D') && (ipLocation).country == 'DE'")).toBe(true);
    expect(matches('has(verdicts.vpn.result) && has(ipLocation.country) && verdicts.tampering.anomalyScore == 0.0')).toBe(true);
    // A macro's variable named as a field of the view is the element, not the view.
    expect(matches("[{'country': 'FR'}].exists(ipLocation, ipLocation.country == 'FR') && ipLocation.country == 'DE'")).toBe(true);
    expect(matches("[{'country': 'FR'}].exists(ipLocation, ipLocation.country == 'DE')")).toBe(false);
  });

  it('runs nested fields as variables of their own, except in has(), in brackets and where a macro binds a field’s name', () => {
    const flat = /_v\d+/g;
    const run = (e: string) => runnableExpression(e)!;
    // Each nested field its own variable, the same one wherever it is read; top-level fields and literals as written.
    const both = run("verdicts.bot.result && ipLocation.country == 'DE' && suspectScore > 1 || ipLocation.country == 'FR'");
    const [bot, country, again] = both.match(flat)!;
    expect(both).toBe(`${bot} && ${country} == 'DE' && suspectScore > 1 || ${again} == 'FR'`);
    expect(new Set([bot, country, again]).size).toBe(2);
    expect(run('velocity.events.h1 > 1')).toMatch(/^_v\d+ > 1$/);
    expect(run('verdicts.vpn.result')).toMatch(/^_v\d+$/);
    expect(run("inList('l', ipLocation.country)")).toMatch(/^inList\('l', _v\d+\)$/);
    // Comments are blanked (a chain across one becomes one variable), matches() runs RE2.
    expect(run("verdicts . vpn // note\n .result && ipLocation.country.matches('^D')")).toMatch(/^_v\d+ && _v\d+\.matchesRe2\('\^D'\)$/);
    // Left as written: has()'s argument (nested fields below it too), a bracketed selection, the tag's keys.
    expect(run('has(verdicts.vpn.result)')).toBe('has(verdicts.vpn.result)');
    expect(run("(ipLocation).country == 'DE'")).toBe("(ipLocation).country == 'DE'");
    expect(run("has(tag.plan) && tag.plan == 'x'")).toBe("has(tag.plan) && tag.plan == 'x'");
    // A macro variable named as a top-level field keeps the whole expression as written; any other name does not.
    const shadowing = "[{'country': 'FR'}].exists(ipLocation, ipLocation.country == 'FR') && ipLocation.country == 'DE'";
    expect(run(shadowing)).toBe(shadowing);
    expect(run("riskFactors.exists(f, f == 'x') && verdicts.vpn.result")).toMatch(/^riskFactors\.exists\(f, f == 'x'\) && _v\d+$/);
    expect(runnableExpression('verdicts.vpn')).toBeNull();
  });

  it('runs rules of every construct', () => {
    const rules = [
      rule("-suspectScore < 0 && !newVisitor && {'a': [1]}.size() == 1 && (newVisitor ? false : true) && has(tag.plan) && 'VPN_DETECTED' in riskFactors", {
        mode: 'test',
      }),
    ];
    expect(decide(rules).testMatches).toEqual([rules[0]!.id]);
  });

  it('runs each rule with the lists of its decision', () => {
    const set = new CompiledRuleset([rule("inList('vips', visitorId) && inList('asns', ipLocation.asn)", { action: 'allow' as RuleAction })]);
    const calls: [string, string | number][] = [];
    const lists = (answer: boolean): ListLookup => ({ has: (l, v) => (calls.push([l, v]), answer) });
    expect(set.decide(view(), lists(true)).action).toBe('allow');
    expect(set.decide(view(), lists(false)).action).toBeNull();
    expect(calls).toEqual([
      ['vips', 'vis_1'],
      ['asns', 0],
      ['vips', 'vis_1'],
    ]);
  });
});

describe('checkExpression', () => {
  it('accepts a bool expression over the view', () => {
    expect(checkExpression("verdicts.bot.result && verdicts.bot.kind == 'bad' || suspectScore >= 80 && ipLocation.country in ['KP', 'IR']")).toBeNull();
  });

  it('accepts every field of the view and every example of the functions', () => {
    const zero: Record<string, string> = { string: "''", int: '0', double: '0.0', bool: 'false', 'list(string)': '[]', 'map(string, dyn)': '{}' };
    for (const f of RULE_FIELDS) expect(checkExpression(`${f.path} == ${zero[f.type]!}`), f.path).toBeNull();
    for (const f of RULE_FUNCTIONS) expect(checkExpression(f.example), f.example).toBeNull();
  });

  it('runs every example of the functions without an error', () => {
    const d = decide(
      RULE_FUNCTIONS.map((f) => rule(f.example, { mode: 'test' })),
      view({ tagJson: '{"country":"de","asn":"3320","plan":"pro"}' }),
    );
    expect(d.errored).toEqual([]);
  });

  it(`refuses more than ${RULE_EXPRESSION_MAX} characters`, () => {
    const text = `${'true || '.repeat(500)}true`;
    expect(text.length).toBeGreaterThan(RULE_EXPRESSION_MAX);
    expect(checkExpression(text)).toEqual({
      message: `longer than ${RULE_EXPRESSION_MAX} characters`,
      offset: RULE_EXPRESSION_MAX,
      line: 1,
      column: RULE_EXPRESSION_MAX + 1,
    });
    expect(checkExpression(`${' '.repeat(RULE_EXPRESSION_MAX - 4)}true`)).toBeNull();
  });

  it('places an error at its line and column', () => {
    expect(checkExpression("timestamp > 0 &&\n  suspectScore >\n    'x'")).toEqual({
      message: 'no such overload: int > string',
      offset: 19,
      line: 2,
      column: 3,
    });
    expect(checkExpression('newVisitor &&\n\n   verdicts.bot.nope')).toEqual({ message: 'No such key: nope', offset: 31, line: 3, column: 17 });
    expect(checkExpression('newVisitor ||\n')).toMatchObject({ offset: 14, line: 2, column: 1 });
  });

  it('refuses type errors, unknown fields, variables and functions', () => {
    expect(checkExpression("suspectScore > 'x'")).toMatchObject({ message: 'no such overload: int > string', offset: 0 });
    expect(checkExpression('verdicts.bot.foo')).toMatchObject({ message: 'No such key: foo', offset: 13 });
    expect(checkExpression('visitor == 1')).toMatchObject({ message: 'Unknown variable: visitor', offset: 0 });
    expect(checkExpression('isBot(userAgent)')).toMatchObject({ message: "found no matching overload for 'isBot(string)'" });
    expect(checkExpression("inList('l', 1.5)")).toMatchObject({ message: "found no matching overload for 'inList(string, double)'" });
  });

  it('refuses an expression that is not a bool', () => {
    expect(checkExpression('suspectScore')).toEqual({ message: 'must be a bool (true or false), not int', offset: 0, line: 1, column: 1 });
    expect(checkExpression('tag.plan')).toMatchObject({ message: 'must be a bool (true or false), not dyn' });
    expect(checkExpression("'x'")).toMatchObject({ message: 'must be a bool (true or false), not string' });
  });

  it('refuses the library functions rules do not list', () => {
    expect(checkExpression("urlPath.split('/').size() > 2")).toMatchObject({ message: 'split() is not available in rules', offset: 0 });
    expect(checkExpression('newVisitor && cel.bind(a, suspectScore, a > 1)')).toMatchObject({ message: 'bind() is not available in rules', offset: 14 });
    expect(checkExpression("timestamp(url) == timestamp('2024-01-01T00:00:00Z')")).toMatchObject({ message: 'timestamp() is not available in rules' });
    expect(checkExpression("type(tag) == map && dyn(1) == 1 && b'x'.size() == 1")).toMatchObject({ message: 'type() is not available in rules' });
  });

  it('reaches nothing outside the view', () => {
    for (const text of ['verdicts.constructor == verdicts', "verdicts['__proto__'] == verdicts", 'browser.constructor.name == "Object"']) {
      expect(checkExpression(text), text).toMatchObject({ message: expect.stringMatching(/No such key|no such overload/) });
    }
    // The tag is a map: an own key only.
    const d = decide([rule('tag.constructor == 1'), rule("tag['toString'] == 1"), rule("has(tag.__proto__) && tag.__proto__ == 'x'", { mode: 'test' })]);
    expect(d.errored).toHaveLength(2);
    expect(d.testMatches).toEqual([]);
    expect(matches("tag['__proto__'].x == 1.0", view({ tagJson: '{"__proto__":{"x":1}}' }))).toBe(true);
  });

  it(`refuses nesting deeper than ${NESTING_MAX} brackets or unary operators, outside strings and comments`, () => {
    const parens = (k: number) => `${'('.repeat(k)}true${')'.repeat(k)}`;
    expect(checkExpression(parens(NESTING_MAX))).toBeNull();
    expect(checkExpression(parens(NESTING_MAX + 1))).toMatchObject({ message: `nested more than ${NESTING_MAX} brackets deep`, offset: NESTING_MAX });
    expect(checkExpression(`${'!'.repeat(NESTING_MAX)}true`)).toBeNull();
    expect(checkExpression(`${'! '.repeat(NESTING_MAX + 1)}true`)).toMatchObject({
      message: `more than ${NESTING_MAX} unary operators in a row`,
      offset: 2 * NESTING_MAX,
    });
    expect(checkExpression(`${'-'.repeat(NESTING_MAX + 1)}1 < 0`)).toMatchObject({ offset: NESTING_MAX });
    expect(
      checkExpression(
        `'${'('.repeat(100)}' != url && ${'!'.repeat(20)} !true // ${'('.repeat(100)}\n|| "${'[!'.repeat(50)}" == r'\\'' && """${'{'.repeat(40)}" """ == ""`,
      ),
    ).toBeNull();
  });

  it('counts brackets as they close, and unary operators only in a row', () => {
    expect(checkExpression(Array(40).fill('(true)').join(' && '))).toBeNull();
    const lists = `[${Array(40).fill('[1]').join(', ')}].size() > 0`;
    const maps = `{${Array.from({ length: 40 }, (_, i) => `'${i}': {'a': 1}`).join(', ')}}.size() > 0`;
    expect(checkExpression(`${lists} && ${maps}`)).toBeNull();
    expect(checkExpression(Array(40).fill('!newVisitor').join(' && '))).toBeNull();
    for (const space of ['\t', '\n', '\r\n'])
      expect(checkExpression(`${`!${space}`.repeat(NESTING_MAX + 1)}true`)).toMatchObject({ message: `more than ${NESTING_MAX} unary operators in a row` });
    // A division is no comment: what follows it is counted.
    expect(checkExpression(`suspectScore / 2 > 0 || ${'('.repeat(NESTING_MAX + 1)}true${')'.repeat(NESTING_MAX + 1)}`)).toMatchObject({
      message: `nested more than ${NESTING_MAX} brackets deep`,
    });
    // Strings end at their own quote, past escaped ones, and what follows them is counted.
    const q3 = '"'.repeat(3);
    const tripled = `${q3}a"b${'['.repeat(40)}${q3}`;
    expect(checkExpression(`'it\\'s ${'('.repeat(40)}' == url && ${tripled} == url`)).toBeNull();
    expect(checkExpression(`${'('.repeat(NESTING_MAX)}'a'(1)`)).toMatchObject({
      message: `nested more than ${NESTING_MAX} brackets deep`,
      offset: NESTING_MAX + 3,
    });
    expect(checkExpression(`'${'('.repeat(40)}`)).toMatchObject({ message: expect.not.stringContaining('nested') });
    for (const open of ['[', '{'])
      expect(checkExpression(`${open.repeat(NESTING_MAX + 1)}`)).toMatchObject({ message: `nested more than ${NESTING_MAX} brackets deep` });
    // Closing one bracket leaves the others open.
    expect(checkExpression(`((true) && ${'('.repeat(NESTING_MAX)}true${')'.repeat(NESTING_MAX + 1)}`)).toMatchObject({
      message: `nested more than ${NESTING_MAX} brackets deep`,
    });
    // A comment may end the text.
    expect(checkExpression('newVisitor // a note, (((')).toBeNull();
  });

  it('refuses macros with something else than a variable first', () => {
    expect(checkExpression('riskFactors.exists(1, true)')).toMatchObject({ message: expect.stringContaining('invalid predicate iteration variable') });
  });
});

describe('cost', () => {
  it('allows what rules ordinarily do', () => {
    for (const text of [
      "riskFactors.exists(f, f.startsWith('VPN')) && riskFactors.all(f, f != 'TOR_EXIT_NODE')",
      "riskFactors.exists(a, riskFactors.exists(b, a + b == 'VPN_DETECTEDPROXY'))",
      "userAgent.matches('(?i)(bot|crawler|spider|headless|phantom|selenium)') || userAgent.lowerAscii().contains('python')",
      "tag.plan in ['pro', 'team'] && 'x' in tag.items && has(tag.cart.total)",
      'size(tag.items) > 2 && tag.items[0] == tag.items[1]',
      "tag.sku.startsWith('X-') && referrer.endsWith('.example')",
    ])
      expect(checkExpression(text), text).toBeNull();
  });

  it('refuses what could run away on a large tag: comprehensions over it, regular expressions on its strings', () => {
    for (const [text, offset] of [
      ['tag.items.exists(i, tag.items.exists(j, i == j))', 20],
      ["tag.items.exists(i, i == 'b')", 0],
      ["tag.items.exists(i, i.contains('x'))", 0],
      ['newVisitor && size(tag.note + tag.note + tag.note + tag.note + tag.note) > 1', 14],
      ["tag.note.matches('" + 'a?'.repeat(20) + "')", 0],
    ] as const)
      expect(checkExpression(text), text).toMatchObject({ message: expect.stringMatching(/^too costly: about .* units at worst, 1000000 allowed/), offset });
    expect(COST_MAX).toBe(1_000_000);
  });

  it('estimates each construct as its model says (a node each, characters, lookups, patterns, comprehensions)', () => {
    const { NODE: N, CHAR: C, SIZE_CHAR, REGEX, LOOKUP } = COST;
    const [UA, S, F, L, TAG] = [VIEW_USER_AGENT_MAX, VIEW_STRING_MAX, VIEW_FACTOR_MAX, VIEW_LIST_MAX, LIMITS.tagBytes];
    const instructions = (p: string) => new RE2JS(p, RE2JS.DISABLE_UNICODE_GROUPS).re2().prog.numInst();
    // A comprehension's step: its node and its body.
    const each = (body: number) => N + body;
    const cases: [string, number][] = [
      ['newVisitor', N],
      ['!newVisitor', 2 * N],
      ['-suspectScore < 0', 4 * N + C],
      ['suspectScore - 1 * 2 / 3 % 4 > 0', 11 * N + C],
      ['suspectScore + 1 > 2', 5 * N + C],
      // Strings compare as far as the shorter goes, and concatenate by copying.
      ["userAgent == 'abc'", 3 * N + C * 3],
      ["userAgent + url == 'x'", 5 * N + C * (UA + S) + C],
      ["verdicts.bot.name + '' == userAgent", 7 * N + C * S + C * UA],
      ["tag.a.b + 'x' == ''", 7 * N + C * (TAG + 1)],
      ["riskFactors[0] + '' == ''", 7 * N + C + C * F],
      ["(newVisitor ? userAgent : url) + 'x' == ''", 7 * N + C * (S + 1)],
      ['(newVisitor ? [1] : [1, 2, 3]).size() == 0', 9 * N + C * (1 + 3) + C],
      ["userAgent.lowerAscii() + userAgent.upperAscii() + userAgent.trim() == ''", 10 * N + 3 * C * UA + C * 2 * UA + C * 3 * UA],
      ["string(suspectScore) + 'ab' == ''", 6 * N + C + C * (32 + 2)],
      ["url.startsWith('abc') && url.endsWith('de')", 7 * N + C * 3 + C * 2],
      ["url.contains('ab') && int(url) > 1 && double(url) > 1.0", 13 * N + C * (S + 2) + 2 * (C * S + C)],
      ["inList('a', ip) && cidr(ip, '1.2.3.0/24')", 7 * N + 2 * LOOKUP + C * (1 + S) + C * (S + 10)],
      ["userAgent.matches('ab')", 3 * N + REGEX * UA * instructions('ab')],
      ['size(userAgent) > 0', 4 * N + SIZE_CHAR * UA + C],
      ['size(riskFactors) + size(tag) > 0', 7 * N + C],
      // Lists and maps: their literals are built, then scanned or looked up.
      ['[1, 2, 3].size() == 3', 7 * N + C * (1 + 3) + C],
      ["{'a': 1, 'bb': 2}.size() == 2", 8 * N + C * (1 + 5) + C],
      ["'x' in ['a', 'bb']", 5 * N + C * (1 + 3) + 2 * (N + C)],
      ["'a' in riskFactors", 3 * N + L * (N + C)],
      ["'a' in tag", 3 * N + C],
      ["tag['k'] == 1", 5 * N + C + C],
      ['has(tag.x)', 3 * N],
      ["tag['key'] == 1", 5 * N + C * 3 + C],
      ["'abc' in tag", 3 * N + C * 3],
      ["'abc' in riskFactors", 3 * N + L * (N + C * 3)],
      ['confidence + 1.0 > 0.0', 5 * N + C],
      ['1u + 2u > 0u', 5 * N + C],
      ['suspectScore <= 1 || suspectScore >= 2', 7 * N + 2 * C],
      ["'a'.trim() + 'b' == ''", 6 * N + C + C * 2],
      ["string(url) == ''", 4 * N + C * S],
      // Comprehensions: every element as large as can be (the risk factors, all alike) …
      ["riskFactors.exists(f, f == 'a')", 2 * N + L * each(3 * N + C)],
      ["riskFactors.all(f, f.startsWith('ab'))", 2 * N + L * each(3 * N + 2 * C)],
      ["riskFactors.filter(f, f == 'a').size() > 0", 2 * N + L * each(3 * N + C) + 3 * N + C],
      ["riskFactors.map(f, f != 'x', f + 'y').size() > 0", 2 * N + L * each(3 * N + C + 3 * N + C * (F + 1)) + 3 * N + C],
      ["riskFactors.map(f, f + f).exists(g, g == 'a')", 2 * N + L * each(3 * N + 2 * C * F) + N + L * each(3 * N + C)],
      ["riskFactors.exists(f, riskFactors.exists(f, f == 'a'))", 2 * N + L * each(2 * N + L * each(3 * N + C))],
      ['[[1, 2], [3]].exists(l, l.size() > 1)', 6 * N + C * (3 + 2 + 6) + N + 2 * each(4 * N + C)],
      // The larger of two lists in either branch, or both concatenated.
      ["(newVisitor ? riskFactors : ['a']).exists(f, f.contains('z'))", 5 * N + C * 2 + L * each(3 * N + C * (F + 1))],
      ["(riskFactors + ['a']).exists(f, f.contains('z'))", 5 * N + C * 2 + C * (L * F + 2) + (L + 1) * each(3 * N + C * (F + 1))],
      ["riskFactors.filter(f, f == 'a').exists(g, g == 'b')", 3 * N + 2 * L * each(3 * N + C)],
      ['riskFactors.exists(f, true) == riskFactors.all(f, true)', 2 * (2 * N + L * each(N)) + N + C],
      ["riskFactors.map(f, f + f).exists(g, g.contains('z'))", 3 * N + L * each(3 * N + 2 * C * F) + L * each(3 * N + C * (2 * F + 1))],
      // An inner variable of the same name hides the outer one in its body only.
      ["riskFactors.exists(f, ['abc'].exists(f, f == 'a') && f + f == '')", 2 * N + L * each(3 * N + C * 4 + each(3 * N + C) + 5 * N + C * 2 * F + N)],
      // … or a few of them large and the rest of the average size, when that is less.
      [
        `['${'a'.repeat(100)}', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].exists(x, x.contains('q'))`,
        11 * N + C * (1 + 109) + N + 2 * each(3 * N + C * (100 + 1)) + 10 * each(3 * N + C * (11 + 1)),
      ],
      // The tag's keys: half as many as its characters.
      ['tag.exists(k, true)', 2 * N + (TAG / 2) * each(N)],
    ];
    for (const [text, cost] of cases) expect(worstCase(text), text).toBe(cost);
    expect(worstCase('suspectScore')).toBeNull();
  });

  it('refuses comprehensions nested more than three deep', () => {
    const nest = (k: number) => `${'riskFactors.exists(f, '.repeat(k)}true${')'.repeat(k)}`;
    expect(checkExpression(nest(2))).toBeNull();
    expect(checkExpression(nest(4))).toMatchObject({ message: 'comprehensions nested more than 3 deep', offset: 66 });
  });
});

describe('matches', () => {
  it('searches with RE2 (unanchored, (?i) flags)', () => {
    expect(matches("userAgent.matches('Chrome/12[0-9]')")).toBe(true);
    expect(matches("userAgent.matches('^Chrome')")).toBe(false);
    expect(matches("userAgent.matches('(?i)chrome') && !userAgent.matches('chrome')")).toBe(true);
    expect(matches("urlPath.matches('^/checkout/(pay|confirm)$')")).toBe(true);
  });

  it('answers each input on its own (the answers it keeps are per input and pattern)', () => {
    const set = new CompiledRuleset([rule("userAgent.matches('Firefox')", { mode: 'test' }), rule("userAgent.matches('Chrome')", { mode: 'test' })]);
    const [firefox, chrome] = [view({}, 'Mozilla/5.0 Firefox/125.0'), view()];
    for (let i = 0; i < 2; i++) {
      expect(set.decide(firefox, NO_LISTS).testMatches).toHaveLength(1);
      expect(set.decide(chrome, NO_LISTS).testMatches).toHaveLength(1);
    }
    expect(set.decide(chrome, NO_LISTS).testMatches).not.toEqual(set.decide(firefox, NO_LISTS).testMatches);
  });

  it('runs in linear time on what backtracks forever elsewhere', () => {
    const started = performance.now();
    expect(matches("userAgent.matches('(a+)+$')", view({}, `${'a'.repeat(1000)}!`))).toBe(false);
    expect(matches("userAgent.matches('(a+)+!')", view({}, `${'a'.repeat(1000)}!`))).toBe(true);
    expect(matches("userAgent.matches('^(a|aa)+$')", view({}, `${'a'.repeat(1000)}!`))).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('runs RE2 wherever the call stands: in parentheses, after comments, on any string', () => {
    expect(matches("(suspectScore == 40) && (userAgent).matches('Chrome') && (url + ' ' + userAgent).matches('pay Moz')")).toBe(true);
    expect(matches("userAgent // matches('x') here\n  .matches('(?i)CHROME') && 'a'.matches('a') // .matches(\n")).toBe(true);
    expect(matches("(userAgent.matches('Chrome') ? 'Chrome/x' : 'y').matches('^Chrome/')")).toBe(true);
    expect(matches("'https://a.example//x' != url && url.matches('//?shop') // matches\n|| userAgent.matches('x')")).toBe(true);
    expect(matches("userAgent.matches( // matches\n'(?i)chrome')")).toBe(true);
    expect(matches("'//' != url && userAgent.matches('(?i)chrome')")).toBe(true);
    expect(matches('"//" != url && userAgent.matches(\'(?i)chrome\')')).toBe(true);
    expect(matches("newVisitor // a long comment\n|| userAgent.matches('(?i)chrome') && userAgent.matches('(?i)mozilla')")).toBe(true);
  });

  it('takes only a valid RE2 literal, and few and small ones', () => {
    expect(checkExpression('userAgent.matches(url)')).toMatchObject({ message: 'matches() takes a string literal pattern', offset: 18 });
    expect(checkExpression("userAgent.matches('(a)\\\\1')")).toMatchObject({ message: expect.stringContaining('invalid RE2 pattern'), offset: 18 });
    expect(checkExpression("userAgent.matches('(?=a)')")).toMatchObject({ message: expect.stringContaining('invalid RE2 pattern') });
    expect(checkExpression("userAgent.matches('\\\\p{Greek}')")).toMatchObject({ message: expect.stringContaining('invalid RE2 pattern') });
    expect(checkExpression("userAgent.matches('(a{100}){30}')")).toMatchObject({
      message: 'pattern too large: its counted repetitions expand it past 2000 instructions',
      offset: 18,
    });
    expect(checkExpression("userAgent.matches('a{1000}')")).toMatchObject({ message: expect.stringContaining('too costly') });
    expect(checkExpression("userAgent.matches('(x{1,50}){1,20}')")).toMatchObject({ message: expect.stringContaining('pattern too large') });
    // Sized right before compiling, and too large once compiled (2,001 instructions); one fewer is allowed.
    expect(checkExpression("'a'.matches('xy\\\\w{1,999}')")).toMatchObject({ message: expect.stringContaining('pattern too large'), offset: 12 });
    expect(checkExpression("'a'.matches('x\\\\w{1,999}')")).toBeNull();
    // On a literal: patterns' limits, not the cost, are what refuse these.
    const each = (k: number, len: number) => Array.from({ length: k }, (_, i) => `'abc'.matches('${String(i).padEnd(len, 'x')}')`).join(' || ');
    expect(checkExpression(each(PATTERNS_MAX, 4))).toBeNull();
    expect(checkExpression(each(PATTERNS_MAX + 1, 4))).toMatchObject({ message: `more than ${PATTERNS_MAX} distinct patterns` });
    expect(checkExpression(`${each(1, PATTERN_MAX / 2)} || 'abc'.matches('${'y'.repeat(PATTERN_MAX / 2)}')`)).toBeNull();
    expect(checkExpression(`${each(1, PATTERN_MAX / 2)} || 'abc'.matches('${'y'.repeat(PATTERN_MAX / 2 + 1)}')`)).toMatchObject({
      message: `patterns longer than ${PATTERN_MAX} characters in all`,
    });
    // One pattern used twice is one.
    expect(checkExpression(`${each(PATTERNS_MAX, 4)} || url.matches('0xxx')`)).toBeNull();
  });

  it('sizes a pattern by its counted repetitions before compiling it', () => {
    expect(patternSize('abc')).toBe(3);
    expect(patternSize('[a-z]x\\.')).toBe(3);
    expect(patternSize('(ab)')).toBe(4);
    expect(patternSize('a{10}')).toBe(10);
    expect(patternSize('a{2,}')).toBe(3);
    expect(patternSize('a{1,5}')).toBe(9);
    expect(patternSize('((a{10}){10}){10}')).toBe(1220);
    expect(patternSize('[]{]{3}')).toBe(3);
    expect(patternSize('a{x}')).toBe(4);
    expect(patternSize('a{x}b{2}')).toBe(6);
    expect(patternSize('(a{2}){3}')).toBe(12);
    expect(patternSize('[^a]{3}')).toBe(3);
    expect(patternSize('[^]a]{3}')).toBe(3);
    expect(patternSize('[a\\]b]{3}')).toBe(3);
    expect(patternSize('[ab')).toBe(1);
    expect(patternSize('a(b(c')).toBe(3);
    expect(patternSize('a)b')).toBe(4);
    expect(patternSize('x(ab){3}')).toBe(13);
    expect(patternSize('[a]{3}')).toBe(3);
  });
});

describe('inList and cidr', () => {
  it('asks the lists for strings as they are and ints as numbers', () => {
    const lists: ListLookup = { has: (l, v) => (l === 'countries' && v === 'DE') || (l === 'counts' && v === 40) };
    expect(matches("inList('countries', ipLocation.country)", view(), lists)).toBe(true);
    expect(matches('inList("counts", suspectScore)', view(), lists)).toBe(true);
    expect(matches("inList('other', ipLocation.country)", view(), lists)).toBe(false);
  });

  it('tests an address against a v4 or v6 range', () => {
    expect(cidr('203.0.113.9', '203.0.113.0/24')).toBe(true);
    expect(cidr('203.0.114.9', '203.0.113.0/24')).toBe(false);
    expect(cidr('203.0.113.9', '203.0.113.9/32')).toBe(true);
    expect(cidr('203.0.113.9', '0.0.0.0/0')).toBe(true);
    expect(cidr('2001:db8::1', '2001:db8::/32')).toBe(true);
    expect(cidr('2001:db9::1', '2001:db8::/32')).toBe(false);
    expect(cidr('2001:db8::1', '::/0')).toBe(true);
    expect(cidr('2001:db8::1', '2001:db8::/48')).toBe(true);
    expect(matches("cidr(ip, '203.0.113.0/28') && !cidr(ip, '2001:db8::/32')")).toBe(true);
  });

  it('takes an IPv4-mapped address or range as its IPv4', () => {
    expect(cidr('::ffff:203.0.113.9', '203.0.113.0/24')).toBe(true);
    expect(cidr('203.0.113.9', '::ffff:203.0.113.0/120')).toBe(true);
    expect(cidr('203.0.114.9', '::ffff:203.0.113.0/120')).toBe(false);
    expect(cidr('203.0.113.9', '::ffff:0:0/95')).toBe(false);
  });

  it('is false, not an error, for unparsable or mismatched addresses and ranges', () => {
    for (const [ip, range] of [
      ['203.0.113.9', '2001:db8::/32'],
      ['2001:db8::1', '0.0.0.0/0'],
      ['', '0.0.0.0/0'],
      ['not an ip', '0.0.0.0/0'],
      ['0x7f.1', '127.0.0.0/8'],
      ['203.0.113.9', '203.0.113.0'],
      ['203.0.113.9', '203.0.113.0/33'],
      ['2001:db8::1', '2001:db8::/129'],
      ['203.0.113.9', '203.0.113.0/x'],
      ['203.0.113.9', '203.0.113.0/-1'],
      ['203.0.113.9', 'garbage/8'],
      ['2001:db8::0.0.0x1', '::/0'],
      ['::ffff:0x7f.0.0.1', '127.0.0.0/8'],
      ['1::2::3', '::/0'],
      ['203.0.113.9', '24'],
      ['203.0.113.9', '/24'],
      ['203.0.113.9', '203.0.113.9/33'],
      ['2001:db8::1', '2001:db8::1/129'],
      ['2001:db8:1::1', '2001:db8::/48'],
      ['203.0.113.9', '203.0.113.9/0032'],
      ['203.0.113.9', '203.0.113.9/3 '],
    ])
      expect(cidr(ip!, range!), `${ip} ${range}`).toBe(false);
    expect(matches("cidr(ip, 'nonsense') || cidr('nonsense', '0.0.0.0/0')")).toBe(false);
  });

  it('answers for the address it is asked about after another', () => {
    expect(cidr('203.0.113.9', '203.0.113.0/24')).toBe(true);
    expect(cidr('198.51.100.1', '203.0.113.0/24')).toBe(false);
    expect(cidr('203.0.113.9', '203.0.113.0/24')).toBe(true);
  });
});

describe('the view in expressions', () => {
  it('sees every part of the view with its type', () => {
    expect(matches('visitCount == 2 && !newVisitor && firstSeenAt == 1 && timestamp > firstSeenAt && confidence > 0.5 && botProbability < 0.5')).toBe(true);
    expect(matches("'VPN_DETECTED' in riskFactors && verdicts.vpn.confidence == 0.8 && velocity.events.h1 == 9 && velocity.distinctIp.h24 == 0")).toBe(true);
    expect(matches("browser.name == 'Chrome' && browser.major >= 124 && os.name == 'Windows' && device.type == ''")).toBe(true);
    expect(matches("urlPath.startsWith('/checkout') && origin == 'https://shop.example' && referrer == '' && linkedId == '' && !linkedIdVouched")).toBe(true);
    expect(matches("ipVersion == 4 && ipLocation.country == 'DE' && ipLocation.asn == 0 && ipLocation.networkCategory == ''")).toBe(true);
  });

  it('reads the tag as JSON: numbers are doubles, compared with ints too', () => {
    expect(matches("tag.plan == 'pro' && tag.n == 3 && tag.n > 2.5 && tag.n == 3.0 && size(tag.items) == 2")).toBe(true);
    expect(matches("has(tag.plan) && !has(tag.nothing) && 'b' in tag.items && tag.items[0] == 'a'")).toBe(true);
    expect(matches('tag == {}', view({ tagJson: null }))).toBe(true);
  });
});
