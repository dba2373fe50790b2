// Decision rules: CEL expressions over an event's view (view.ts), checked
// when saved and compiled once per ruleset.
//
// Why @marcbachmann/cel-js: the only JavaScript CEL library that type-checks
// against declared variables, object types and overloaded functions before
// running (@bufbuild/cel 0.6 exports no checker; cel-js has none and reads
// `constructor` off objects); errors carry source ranges, the parser has depth
// limits, it has no dependencies, and it evaluates 2× and 8–15× faster than they do.
//
// Its `matches` runs JavaScript RegExp, which backtracks: rules' patterns run
// on @bufbuild/re2 instead (linear time, and CEL's own syntax). It has no
// evaluation budget, so the check bounds an expression's worst case
// statically (`Analysis`): every input has a size bound (the view's strings,
// risk factors and tag) and every function rules may call a cost.
// Comprehensions multiply, so one nested over the tag is refused when saved
// rather than left to run away on an event.
import { RE2JS } from '@bufbuild/re2';
import { Environment, type ASTNode } from '@marcbachmann/cel-js';
import ipaddr from 'ipaddr.js';
import { LRUCache } from 'lru-cache';
import { LIMITS } from '../../contract/identify.js';
import { RULE_EXPRESSION_MAX, RULE_FIELDS, RULE_FUNCTIONS, type RuleAction, type RuleMode } from '../../contract/ruleFields.js';
import { VIEW_FACTOR_MAX, VIEW_LIST_MAX, VIEW_STRING_MAX, VIEW_USER_AGENT_MAX, type DecisionView } from './view.js';

export interface RuleError {
  message: string;
  /** 0-based index into the expression (UTF-16 code units). */
  offset: number;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
}

/** The project's lists (the lists module; expiry is its business). */
export interface ListLookup {
  has(list: string, value: string | number): boolean;
}

export interface RuleInput {
  id: string;
  expression: string;
  action: RuleAction;
  enabled: boolean;
  mode: RuleMode;
}

export interface Decision {
  /** The live rule that decided; null when none matched. */
  ruleId: string | null;
  action: RuleAction | null;
  /** Enabled test rules that matched, in rule order. */
  testMatches: string[];
  /** Enabled rules whose evaluation failed (skipped), in rule order. */
  errored: string[];
}

/** Cost units (about a nanosecond each; see `Est`) an expression may take at worst: a millisecond. */
export const COST_MAX = 1_000_000;
/** Brackets and unary operators an expression may nest. */
export const NESTING_MAX = 32;
/** Distinct `matches` patterns of one expression, and their characters in all: compiling them is most of a check's time. */
export const PATTERNS_MAX = 8;
export const PATTERN_MAX = 256;
/** Instructions of a compiled pattern (counted repetitions expand it). */
const PATTERN_PROGRAM_MAX = 2_000;

// ---- The environment: the view's fields as variables and object types, and the rule functions.

type Scalar = 'string' | 'int' | 'double' | 'bool' | 'list<string>' | 'map<string, dyn>';
interface Leaf {
  readonly kind: 'leaf';
  readonly name: string;
  readonly type: Scalar;
}
interface Obj {
  readonly kind: 'object';
  readonly name: string;
  readonly typeName: string;
  readonly ctor: new () => Record<string, unknown>;
  readonly fields: Field[];
}
type Field = Leaf | Obj;

const CEL_TYPES: Record<string, Scalar> = {
  string: 'string',
  int: 'int',
  double: 'double',
  bool: 'bool',
  'list(string)': 'list<string>',
  'map(string, dyn)': 'map<string, dyn>',
};

/** RULE_FIELDS as a tree: each object a type of its own (view.verdicts.bot …) with a class the activation is built of. */
function viewTree(): Obj {
  const root: Obj = { kind: 'object', name: '', typeName: 'view', ctor: Object as unknown as Obj['ctor'], fields: [] };
  for (const f of RULE_FIELDS) {
    const parts = f.path.split('.');
    let node = root;
    for (const part of parts.slice(0, -1)) {
      let next = node.fields.find((c): c is Obj => c.name === part && c.kind === 'object');
      if (!next) {
        const typeName = `${node.typeName}.${part}`;
        // A class per type: the library tells object types apart by constructor.
        next = { kind: 'object', name: part, typeName, ctor: { [typeName]: class {} }[typeName] as Obj['ctor'], fields: [] };
        node.fields.push(next);
      }
      node = next;
    }
    const type = CEL_TYPES[f.type];
    if (!type) throw new Error(`ruleFields: ${f.path} has type ${f.type}, which the engine does not declare`);
    node.fields.push({ kind: 'leaf', name: parts.at(-1)!, type });
  }
  return root;
}

const VIEW = viewTree();

/** A field of the view below its top level, as the variable compiled rules read it by (runnableText). */
interface FlatLeaf {
  readonly name: string;
  readonly parts: readonly string[];
  readonly type: Scalar;
}
const FLAT = new Map<string, FlatLeaf>(
  RULE_FIELDS.filter((f) => f.path.includes('.')).map((f, i) => [f.path, { name: `_v${i}`, parts: f.path.split('.'), type: CEL_TYPES[f.type]! }]),
);

/** What the expressions being evaluated reach besides the view: set by decide for its synchronous run only. */
interface EvalScope {
  lists: ListLookup;
  patterns: Map<string, Pattern>;
  cidr: CidrCache;
}
let scope: EvalScope | null = null;

function declare(env: Environment, node: Obj): void {
  for (const f of node.fields) if (f.kind === 'object') declare(env, f);
  if (node === VIEW) return;
  const fields: Record<string, string> = {};
  for (const f of node.fields) fields[f.name] = f.kind === 'object' ? f.typeName : f.type;
  env.registerType(node.typeName, { ctor: node.ctor, fields });
}

const inList = (name: string, value: string | bigint) => scope!.lists.has(name, typeof value === 'bigint' ? Number(value) : value);

/** The environment expressions are checked against. */
const checkEnv = new Environment({
  limits: { maxAstNodes: 1_000, maxDepth: NESTING_MAX + 1, maxListElements: 500, maxMapEntries: 500, maxCallArguments: 8 },
});
declare(checkEnv, VIEW);
for (const f of VIEW.fields) checkEnv.registerVariable(f.name, f.kind === 'object' ? f.typeName : f.type);
checkEnv
  .registerFunction('inList(string, string): bool', inList)
  .registerFunction('inList(string, int): bool', inList)
  .registerFunction('cidr(string, string): bool', (ip: string, range: string) => scope!.cidr.test(ip, range));

/**
 * The environment compiled rules run in: the same, plus the method
 * `matchesRe2` that each `s.matches(p)` is renamed to (the library's own
 * method cannot be replaced) and the FLAT variables. Expressions are never
 * checked against it, so no rule can name them directly.
 */
const runEnv = checkEnv.clone().registerFunction('string.matchesRe2(string): bool', (s: string, pattern: string) => {
  return scope!.patterns.get(pattern)!.test(s);
});
for (const leaf of FLAT.values()) runEnv.registerVariable(leaf.name, leaf.type);

// ---- Functions

/** A strict address: four decimal octets, or IPv6 (an IPv4-mapped one as its IPv4). */
function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (text.includes(':')) {
    if (!ipaddr.IPv6.isValid(text)) return null;
    const tail = text.slice(text.lastIndexOf(':') + 1);
    if (tail.includes('.') && !ipaddr.IPv4.isValidFourPartDecimal(tail)) return null;
    const v6 = ipaddr.IPv6.parse(text);
    return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
  }
  return ipaddr.IPv4.isValidFourPartDecimal(text) ? ipaddr.IPv4.parse(text) : null;
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

function parseRange(text: string): Range | null {
  // Without a slash, the whole text is taken for the bits, and the address before them is no address.
  const slash = text.indexOf('/');
  const bitsText = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bitsText)) return null;
  const raw = text.slice(0, slash);
  let bits = Number(bitsText);
  const address = parseAddress(raw);
  if (!address) return null;
  // An IPv4-mapped range (::ffff:a.b.c.d/n) is the IPv4 range of its last 32 bits.
  if (address.kind() === 'ipv4' && raw.includes(':')) bits -= 96;
  return bits >= 0 && bits <= (address.kind() === 'ipv4' ? 32 : 128) ? [address, bits] : null;
}

const inRange = (address: ipaddr.IPv4 | ipaddr.IPv6 | null, r: Range | null) =>
  r !== null && address !== null && address.kind() === r[0].kind() && address.match(r);

export function cidr(ip: string, range: string): boolean {
  return inRange(parseAddress(ip), parseRange(range));
}

/** cidr for one ruleset: its ranges are nearly always literals, and an event's IP is tested by each of its cidr rules, so each is parsed once. */
class CidrCache {
  private readonly ranges = new Map<string, Range | null>();
  private ip = '';
  private address: ipaddr.IPv4 | ipaddr.IPv6 | null = null;

  test(ip: string, range: string): boolean {
    if (ip !== this.ip) [this.ip, this.address] = [ip, parseAddress(ip)];
    let r = this.ranges.get(range);
    if (r === undefined) {
      r = parseRange(range);
      // Ranges taken from the tag could be any: keep the first thousand only.
      if (this.ranges.size < 1_000) this.ranges.set(range, r);
    }
    return inRange(this.address, r);
  }
}

/** A rule's regular expression: RE2 (linear time), with the answers for recent inputs kept (a site's User-Agents repeat). */
class Pattern {
  private readonly re: RE2JS;
  private readonly seen = new LRUCache<string, boolean>({ max: 512, maxSize: 65_536, sizeCalculation: (_v, k) => Math.max(1, k.length) });
  constructor(source: string) {
    this.re = new RE2JS(source, RE2JS.DISABLE_UNICODE_GROUPS);
  }
  get instructions(): number {
    return this.re.re2().prog.numInst();
  }
  test(s: string): boolean {
    let answer = this.seen.get(s);
    if (answer === undefined) {
      answer = this.re.test(s);
      this.seen.set(s, answer);
    }
    return answer;
  }
}

// ---- Checking

class CheckError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

function positioned(text: string, message: string, offset: number): RuleError {
  const at = Math.max(0, Math.min(offset, text.length));
  const before = text.slice(0, at);
  const lineStart = before.lastIndexOf('\n') + 1;
  let line = 1;
  for (let i = before.indexOf('\n'); i !== -1; i = before.indexOf('\n', i + 1)) line++;
  return { message, offset: at, line, column: at - lineStart + 1 };
}

/** The index of the last character of the string literal whose quote is at `open`: to the closing quote (or three), over escapes (the library takes them in raw strings too). */
function stringEnd(text: string, open: number): number {
  const close = text.startsWith(text[open]!.repeat(3), open) ? text[open]!.repeat(3) : text[open]!;
  let j = open + close.length;
  while (j < text.length && !text.startsWith(close, j)) j += text[j] === '\\' ? 2 : 1;
  return j + close.length - 1;
}

/** The index of the end of the line a comment starts on at `i`. */
function lineEnd(text: string, i: number): number {
  const end = text.indexOf('\n', i);
  return end === -1 ? text.length : end;
}

/**
 * Nesting of brackets and runs of unary operators, outside string literals
 * and comments: the library's parser recurses on both, and it limits the
 * first only.
 */
function nestingGuard(text: string): CheckError | null {
  let depth = 0;
  let unary = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'") {
      i = stringEnd(text, i);
      unary = 0;
    } else if (c === '/' && text[i + 1] === '/') {
      i = lineEnd(text, i);
    } else if (c === '(' || c === '[' || c === '{') {
      if (++depth > NESTING_MAX) return new CheckError(`nested more than ${NESTING_MAX} brackets deep`, i);
    } else if (c === ')' || c === ']' || c === '}') {
      depth = Math.max(0, depth - 1);
    } else if (c === '!' || c === '-') {
      if (++unary > NESTING_MAX) return new CheckError(`more than ${NESTING_MAX} unary operators in a row`, i);
    } else if (c !== ' ' && c !== '\t' && c !== '\n' && c !== '\r') {
      unary = 0;
    }
  }
  return null;
}

/**
 * Worst case of a value: what computing it costs, its size (characters,
 * elements or entries), the largest volume of one of its elements, and its
 * whole volume (characters in all, nested values included).
 */
interface Est {
  cost: number;
  size: number;
  elem: number;
  vol: number;
}

/** Costs in units of about a nanosecond, measured on the library (bench/rules.ts). */
export const COST = {
  /** Evaluating one node: the library interprets its tree. */
  NODE: 50,
  /** A character compared, copied or scanned. */
  CHAR: 2,
  /** A character of size(string): the library counts code points one by one. */
  SIZE_CHAR: 16,
  /** A pattern instruction run on a character: RE2's worst case (its DFA is often ten times faster). */
  REGEX: 3,
  /** One list or map lookup (inList), or one parse of an address (cidr). */
  LOOKUP: 200,
};
const { NODE, CHAR, SIZE_CHAR, REGEX, LOOKUP } = COST;

const scalar = (cost: number): Est => ({ cost, size: 1, elem: 1, vol: 1 });
const string = (size: number, cost: number): Est => ({ cost, size, elem: 1, vol: size });
/** A value of volume v at most (an element of a container: its size is bounded by its volume too). */
const sized = (v: number, cost: number): Est => ({ cost, size: v, elem: v, vol: v });

/**
 * The tag: at most LIMITS.tagBytes of JSON, so as many characters in all and
 * half as many list elements ("0,").
 */
const TAG = { size: LIMITS.tagBytes / 2, elem: LIMITS.tagBytes, vol: LIMITS.tagBytes };

function variableBound(name: string): Omit<Est, 'cost'> {
  if (name === 'userAgent') return { size: VIEW_USER_AGENT_MAX, elem: 1, vol: VIEW_USER_AGENT_MAX };
  const f = VIEW.fields.find((v) => v.name === name)!;
  if (f.kind === 'object') return { size: 1, elem: VIEW_STRING_MAX, vol: VIEW_STRING_MAX };
  switch (f.type) {
    case 'string':
      return { size: VIEW_STRING_MAX, elem: 1, vol: VIEW_STRING_MAX };
    case 'list<string>':
      return { size: VIEW_LIST_MAX, elem: VIEW_FACTOR_MAX, vol: VIEW_LIST_MAX * VIEW_FACTOR_MAX };
    case 'map<string, dyn>':
      return TAG;
    default:
      return { size: 1, elem: 1, vol: 1 };
  }
}

const ALLOWED = new Set(RULE_FUNCTIONS.map((f) => f.name));
const COMPREHENSIONS = new Set(['exists', 'all', 'exists_one', 'filter', 'map']);
/** Comprehensions one inside another: each level's body is estimated twice. */
const COMPREHENSION_DEPTH_MAX = 3;

type Node = ASTNode;
const start = (n: Node) => n.range.start;
/** A checked node's type name. */
const typeOf = (n: Node) => (n as unknown as { checkedType: { name: string } }).checkedType.name;

/**
 * Walks a type-checked expression: refuses functions rules may not call and
 * `matches` patterns that are not RE2 literals, collects the patterns, and
 * bounds the worst-case cost (see the header).
 */
class Analysis {
  readonly patterns = new Map<string, Pattern>();
  private patternChars = 0;
  private depth = 0;
  private readonly vars = new Map<string, Est>();

  walk(n: Node): Est {
    const e = this.estimate(n);
    e.cost += NODE;
    if (e.cost > COST_MAX)
      throw new CheckError(
        `too costly: about ${e.cost.toPrecision(2)} units at worst, ${COST_MAX} allowed (comprehensions multiply, over the tag most)`,
        start(n),
      );
    return e;
  }

  private estimate(n: Node): Est {
    switch (n.op) {
      case 'value':
        return typeof n.args === 'string' ? string(n.args.length, 0) : scalar(0);
      case 'id':
        return { cost: 0, ...(this.vars.get(n.args) ?? variableBound(n.args)) };
      case '.': {
        const of = this.walk(n.args[0]);
        return sized(of.elem, of.cost);
      }
      case '[]': {
        const of = this.walk(n.args[0]);
        const key = this.walk(n.args[1]);
        return sized(of.elem, of.cost + key.cost + CHAR * key.vol);
      }
      case 'list':
      case 'map': {
        // A map's keys and values, or a list's elements.
        const items: Node[] = n.args.flat();
        const ests = items.map((item) => this.walk(item));
        const vol = ests.reduce((s, e) => s + e.vol, 1);
        return { cost: ests.reduce((s, e) => s + e.cost, 0) + CHAR * vol, size: n.args.length, elem: Math.max(1, ...ests.map((e) => e.vol)), vol };
      }
      case '?:': {
        const [c, a, b] = n.args.map((x) => this.walk(x)) as [Est, Est, Est];
        return { cost: c.cost + Math.max(a.cost, b.cost), size: Math.max(a.size, b.size), elem: Math.max(a.elem, b.elem), vol: Math.max(a.vol, b.vol) };
      }
      case '!_':
      case '-_':
        return scalar(this.walk(n.args).cost);
      case 'call':
        return this.call(n, n.args[0], null, n.args[1]);
      case 'rcall':
        return this.call(n, n.args[0], n.args[1], n.args[2]);
      case '+': {
        const [a, b] = this.pair(n.args);
        if (['int', 'uint', 'double'].includes(typeOf(n))) return scalar(a.cost + b.cost);
        // Strings and lists: a copy.
        return { cost: a.cost + b.cost + CHAR * (a.vol + b.vol), size: a.size + b.size, elem: Math.max(a.elem, b.elem), vol: a.vol + b.vol };
      }
      case 'in': {
        const [a, b] = this.pair(n.args);
        const scan = typeOf(n.args[1]).startsWith('map') ? CHAR * a.vol : b.size * (NODE + CHAR * Math.min(a.vol, b.elem));
        return scalar(a.cost + b.cost + scan);
      }
      case '==':
      case '!=':
      case '<':
      case '<=':
      case '>':
      case '>=': {
        const [a, b] = this.pair(n.args);
        return scalar(a.cost + b.cost + CHAR * Math.min(a.vol, b.vol));
      }
      default: {
        // && || - * / %: scalars.
        const [a, b] = this.pair(n.args as [Node, Node]);
        return scalar(a.cost + b.cost);
      }
    }
  }

  private pair(args: [Node, Node]): [Est, Est] {
    return [this.walk(args[0]), this.walk(args[1])];
  }

  private call(n: Node, name: string, receiver: Node | null, args: Node[]): Est {
    if (!ALLOWED.has(name)) throw new CheckError(`${name}() is not available in rules`, start(n));
    if (name === 'has') return scalar(this.walk(args[0]!).cost);
    if (COMPREHENSIONS.has(name)) return this.comprehension(n, name, receiver!, args);
    const operands = [receiver, ...args].filter((x) => x !== null);
    const [a, b] = operands.map((x) => this.walk(x)) as [Est, Est | undefined];
    const cost = a.cost + (b?.cost ?? 0);
    switch (name) {
      case 'matches':
        return scalar(cost + REGEX * a.vol * this.pattern(args[0]!).instructions);
      case 'size':
        return scalar(cost + (typeOf(operands[0]!).startsWith('list') || typeOf(operands[0]!).startsWith('map') ? 0 : SIZE_CHAR * a.vol));
      case 'lowerAscii':
      case 'upperAscii':
      case 'trim':
        return string(a.size, cost + CHAR * a.vol);
      case 'string':
        return string(Math.max(a.vol, 32), cost + CHAR * a.vol);
      case 'startsWith':
      case 'endsWith':
        // Compares the affix only.
        return scalar(cost + CHAR * b!.vol);
      case 'inList':
      case 'cidr':
        return scalar(cost + LOOKUP + CHAR * (a.vol + b!.vol));
      default:
        // contains, int, double: a scan of their operands.
        return scalar(cost + CHAR * (a.vol + (b?.vol ?? 0)));
    }
  }

  /**
   * A comprehension's body runs once per element, each element at most
   * `elem` large and all of them `vol` in all. Its cost, as the estimate
   * computes it, grows with the element's volume either convexly (so the
   * worst is as many elements as large as can be) or concavely (all of the
   * average volume): the sum of the two bounds it.
   */
  private comprehension(n: Node, name: string, receiver: Node, args: Node[]): Est {
    const range = this.walk(receiver);
    // The library's macros take nothing but a name first.
    const variable = args[0] as Extract<Node, { op: 'id' }>;
    if (this.depth === COMPREHENSION_DEPTH_MAX) throw new CheckError(`comprehensions nested more than ${COMPREHENSION_DEPTH_MAX} deep`, start(n));
    const largest = range.elem;
    const average = Math.min(largest, Math.max(1, range.vol / Math.max(1, range.size)));
    const body = (v: number) => this.body(variable.args, sized(v, 0), args.slice(1));
    this.depth++;
    const [big, mean] = [body(largest), body(average)];
    this.depth--;
    const step = (b: Est[]) => b.reduce((s, e) => s + e.cost, NODE);
    // Every element as large as can be is a bound too, and the tighter one when they are all alike.
    const cost = range.cost + Math.min(range.size * step(big), Math.ceil(range.vol / largest) * step(big) + range.size * step(mean));
    if (name === 'filter') return { cost, size: range.size, elem: range.elem, vol: range.vol };
    if (name === 'map') {
      const each = big.at(-1)!;
      return { cost, size: range.size, elem: each.vol, vol: range.size * each.vol };
    }
    return scalar(cost);
  }

  private body(variable: string, value: Est, exprs: Node[]): Est[] {
    const outer = this.vars.get(variable);
    this.vars.set(variable, value);
    try {
      return exprs.map((e) => this.walk(e));
    } finally {
      if (outer) this.vars.set(variable, outer);
      else this.vars.delete(variable);
    }
  }

  private pattern(arg: Node): Pattern {
    if (arg.op !== 'value' || typeof arg.args !== 'string') throw new CheckError('matches() takes a string literal pattern', start(arg));
    const source = arg.args;
    let p = this.patterns.get(source);
    if (p) return p;
    if (this.patterns.size === PATTERNS_MAX) throw new CheckError(`more than ${PATTERNS_MAX} distinct patterns`, start(arg));
    this.patternChars += source.length;
    if (this.patternChars > PATTERN_MAX) throw new CheckError(`patterns longer than ${PATTERN_MAX} characters in all`, start(arg));
    const tooLarge = new CheckError(`pattern too large: its counted repetitions expand it past ${PATTERN_PROGRAM_MAX} instructions`, start(arg));
    // Before compiling: RE2JS compiles an expanded repetition in time of its size.
    if (patternSize(source) > PATTERN_PROGRAM_MAX) throw tooLarge;
    try {
      p = new Pattern(source);
    } catch (e) {
      throw new CheckError(`invalid RE2 pattern: ${(e as Error).message}`, start(arg));
    }
    if (p.instructions > PATTERN_PROGRAM_MAX) throw tooLarge;
    this.patterns.set(source, p);
    return p;
  }
}

/**
 * About the instructions a pattern compiles to, from its text: an atom is
 * one, a group its contents and two, and a counted repetition copies what
 * it follows (an optional copy counts twice).
 */
export function patternSize(source: string): number {
  const outer: number[] = [];
  let size = 0;
  let last = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '(') {
      outer.push(size);
      size = 0;
    } else if (c === ')') {
      last = size + 2;
      size = (outer.pop() ?? 0) + last;
    } else if (c === '{' && /^\{\d+(,\d*)?\}/.test(source.slice(i, i + 16))) {
      const [text, min, comma, max] = /^\{(\d+)(,?)(\d*)\}/.exec(source.slice(i, i + 16))!;
      const n = Number(min);
      // {n}: n copies; {n,}: one more, looping; {n,m}: m - n optional ones besides, two instructions each.
      const copies = comma === '' ? n : max === '' ? n + 1 : n + 2 * Math.max(0, Number(max) - n);
      // (What it copied is copied no further: RE2 refuses a repetition of a repetition.)
      size += last * (copies - 1);
      i += text.length - 1;
    } else {
      if (c === '[') i = classEnd(source, i);
      else if (c === '\\') i++;
      size += 1;
      last = 1;
    }
  }
  return outer.reduce((s, o) => s + o, size);
}

/** The index of the ']' closing the character class opened at `open` (a ']' first in it is a member). */
function classEnd(source: string, open: number): number {
  let j = open + 1;
  if (source[j] === '^') j++;
  if (source[j] === ']') j++;
  while (j < source.length && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
  return j;
}

interface Checked {
  ast: Node;
  patterns: Map<string, Pattern>;
  cost: number;
}

/** A parse or type error of the library (or an error of its own, such as a stack overflow), at its position when it has one. */
function libraryError(text: string, e: unknown): RuleError {
  const err = (e ?? {}) as { summary?: unknown; message?: unknown; range?: { start: number } };
  const message = typeof err.summary === 'string' ? err.summary : String(err.message).split('\n')[0]!;
  return positioned(text, message, err.range?.start ?? 0);
}

function analyse(text: string): Checked | RuleError {
  if (text.length > RULE_EXPRESSION_MAX) return positioned(text, `longer than ${RULE_EXPRESSION_MAX} characters`, RULE_EXPRESSION_MAX);
  const nesting = nestingGuard(text);
  if (nesting) return positioned(text, nesting.message, nesting.offset);
  try {
    const parsed = checkEnv.parse(text);
    const result = parsed.check();
    if (!result.valid) return libraryError(text, result.error);
    if (result.type !== 'bool') return positioned(text, `must be a bool (true or false), not ${result.type}`, 0);
    const analysis = new Analysis();
    const { cost } = analysis.walk(parsed.ast);
    return { ast: parsed.ast, patterns: analysis.patterns, cost };
  } catch (e) {
    return e instanceof CheckError ? positioned(text, e.message, e.offset) : libraryError(text, e);
  }
}

/** Whether an expression may be saved: null, or the first error with its position. */
export function checkExpression(expression: string): RuleError | null {
  const r = analyse(expression);
  return 'ast' in r ? null : r;
}

/** What an expression may cost at worst, in COST units (at most COST_MAX); null when it does not check. An editor may show it. */
export function worstCase(expression: string): number | null {
  const r = analyse(expression);
  return 'ast' in r ? r.cost : null;
}

// ---- Running

/**
 * The text a rule runs as: each `s.matches(p)` calls runEnv's `matchesRe2`,
 * and each nested field of the view (`verdicts.bot.result`) reads its own
 * variable (FLAT), which the library looks up once instead of walking
 * object types field by field: most of a rule's time otherwise. A field
 * named in `has()` or written with brackets stays a selection (the macro needs one), and nothing is
 * flattened where a macro binds a variable of a top-level field's name (it
 * would shadow the view). Comments are blanked first, so that the last
 * word before a pattern is its method's name.
 */
function runnableText(text: string, ast: Node): { text: string; flat: FlatLeaf[] } {
  let clean = '';
  for (let i = 0; i < text.length; i++) {
    const from = i;
    if (text[i] === '"' || text[i] === "'") i = stringEnd(text, i);
    else if (text.startsWith('//', i)) i = lineEnd(text, i) - 1;
    clean += text.startsWith('//', from) ? ' '.repeat(i - from + 1) : text.slice(from, i + 1);
  }
  const flatten = !bindsViewName(ast);
  const edits: [from: number, to: number, replacement: string][] = [];
  const flat: FlatLeaf[] = [];
  const visit = (n: Node, hasArgument: boolean): void => {
    const leaf = flatten && !hasArgument && n.op === '.' ? FLAT.get(viewPath(n) ?? '') : undefined;
    // A selection's range starts at its first name, inside any brackets around it: `(ipLocation).country` runs as written.
    if (leaf && !/[()]/.test(clean.slice(n.range.start, n.range.end))) {
      edits.push([n.range.start, n.range.end, leaf.name]);
      if (!flat.includes(leaf)) flat.push(leaf);
      return;
    }
    if (n.op === 'rcall' && n.args[0] === 'matches') {
      const at = clean.lastIndexOf('matches', n.args[2][0]!.range.start);
      edits.push([at, at + 'matches'.length, 'matchesRe2']);
    }
    for (const c of children(n)) visit(c, n.op === 'call' && n.args[0] === 'has');
  };
  visit(ast, false);
  for (const [from, to, replacement] of edits.sort((x, y) => y[0] - x[0])) clean = `${clean.slice(0, from)}${replacement}${clean.slice(to)}`;
  return { text: clean, flat };
}

/** The text an expression runs as (runnableText); null when it does not check. Tests read the rewrite here. */
export function runnableExpression(expression: string): string | null {
  const r = analyse(expression);
  return 'ast' in r ? runnableText(expression, r.ast).text : null;
}

/** Whether a macro (`exists`, `map` …) names its variable as a top-level field of the view. */
function bindsViewName(ast: Node): boolean {
  const visit = (n: Node): boolean => {
    const bound = n.op === 'rcall' && n.args[2].length >= 2 && n.args[2][0]!.op === 'id' ? n.args[2][0].args : null;
    if (bound !== null && VIEW.fields.some((f) => f.name === bound)) return true;
    return children(n).some(visit);
  };
  return visit(ast);
}

/** A node's sub-expressions in source order. */
function children(n: Node): Node[] {
  switch (n.op) {
    case 'value':
    case 'id':
      return [];
    case '.':
      return [n.args[0]];
    case '!_':
    case '-_':
      return [n.args];
    case 'call':
      return n.args[1];
    case 'rcall':
      return [n.args[1], ...n.args[2]];
    case 'map':
      return n.args.flat();
    default:
      // Lists, operators, the conditional (optional types are off).
      return n.args as Node[];
  }
}

/** The dotted path of the view a selection reads (`verdicts.bot`), or null. */
function viewPath(n: Node): string | null {
  if (n.op === 'id') return VIEW.fields.some((f) => f.name === n.args) ? n.args : null;
  if (n.op !== '.') return null;
  const inner = viewPath(n.args[0]);
  return inner === null ? null : `${inner}.${n.args[1]}`;
}

/** The dotted paths of the view an expression reads (`verdicts.bot.result`, `riskFactors`). */
function pathsRead(ast: Node, into: Set<string>): void {
  const visit = (n: Node): void => {
    const p = viewPath(n);
    if (p !== null) into.add(p);
    else children(n).forEach(visit);
  };
  visit(ast);
}

/** The part of the view's tree a ruleset reads: what it reads, with all below it, and what leads there. */
function pruned(node: Obj, read: Set<string>, prefix = ''): Obj {
  const fields: Field[] = [];
  for (const f of node.fields) {
    const path = prefix + f.name;
    const below = [...read].some((p) => p.startsWith(`${path}.`));
    // A leaf read below (tag.plan) is the map itself.
    if (read.has(path) || (below && f.kind === 'leaf')) fields.push(f);
    else if (below && f.kind === 'object') fields.push(pruned(f, read, `${path}.`));
  }
  return { ...node, fields };
}

/** The view as the library takes it: ints as BigInt, each object an instance of its type's class. */
function activation(node: Obj, value: Record<string, unknown>): Record<string, unknown> {
  const out = new node.ctor();
  for (const f of node.fields) {
    const v = value[f.name];
    out[f.name] = f.kind === 'object' ? activation(f, (v ?? {}) as Record<string, unknown>) : libraryValue(f.type, v);
  }
  return out;
}

const libraryValue = (type: Scalar, v: unknown) => (type !== 'int' ? v : Number.isSafeInteger(v) ? BigInt(v as number) : 0n);

/** A FLAT field's value in the library's form; missing (never from view.ts), as activation takes it. */
function flatValue(leaf: FlatLeaf, view: Record<string, unknown>): unknown {
  let v: unknown = view;
  for (const part of leaf.parts) v = (v as Record<string, unknown> | undefined)?.[part];
  return libraryValue(leaf.type, v);
}

const FAILED = () => undefined;

interface Compiled {
  id: string;
  live: boolean;
  action: RuleAction;
  run: (context: Record<string, unknown>) => unknown;
}

/**
 * An ordered ruleset compiled once. Each rule is checked again here (a
 * stored expression may predate a check), and one that fails is listed as
 * errored on every decision.
 */
export class CompiledRuleset {
  private readonly rules: Compiled[] = [];
  private readonly patterns = new Map<string, Pattern>();
  private readonly read = new Set<string>();
  private readonly flat = new Set<FlatLeaf>();
  private readonly cidr = new CidrCache();
  /** Only what the rules read is converted for the library, once per decision. */
  private readonly shape: Obj;

  constructor(rules: readonly RuleInput[]) {
    for (const r of rules) {
      if (!r.enabled) continue;
      this.rules.push({ id: r.id, live: r.mode === 'live', action: r.action, run: this.compile(r.expression) });
    }
    this.shape = pruned(VIEW, this.read);
  }

  /** The rule's evaluation; one that answers nothing when it does not check (it is then errored on every decision). */
  private compile(expression: string): Compiled['run'] {
    const checked = analyse(expression);
    if (!('ast' in checked)) return FAILED;
    for (const [source, p] of checked.patterns) this.patterns.set(source, p);
    try {
      const runnable = runnableText(expression, checked.ast);
      const run = runEnv.parse(runnable.text);
      // Checking once stores the types on the tree; unchecked, the library would check on every run.
      if (!run.check().valid) return FAILED;
      pathsRead(run.ast, this.read);
      for (const leaf of runnable.flat) this.flat.add(leaf);
      return run;
    } catch {
      return FAILED;
    }
  }

  /**
   * The first enabled live rule that matches decides (later live rules are
   * not run); every enabled test rule runs and is listed when it matches. A
   * rule that fails or answers anything but a bool is skipped and listed in
   * `errored`. Never throws.
   */
  decide(view: DecisionView, lists: ListLookup): Decision {
    const decision: Decision = { ruleId: null, action: null, testMatches: [], errored: [] };
    const fields = view as unknown as Record<string, unknown>;
    const context = activation(this.shape, fields);
    for (const leaf of this.flat) context[leaf.name] = flatValue(leaf, fields);
    scope = { lists, patterns: this.patterns, cidr: this.cidr };
    try {
      for (const rule of this.rules) {
        if (rule.live && decision.ruleId !== null) continue;
        let result: unknown;
        try {
          result = rule.run(context);
        } catch {
          // Listed as errored below.
        }
        if (typeof result !== 'boolean') decision.errored.push(rule.id);
        else if (result && rule.live) [decision.ruleId, decision.action] = [rule.id, rule.action];
        else if (result) decision.testMatches.push(rule.id);
      }
    } finally {
      scope = null;
    }
    return decision;
  }
}
