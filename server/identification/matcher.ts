// Comparing two component sets, after FP-STALKER (Vastel et al., S&P 2018):
// rules that forbid impossible changes, a weighted component-by-component
// similarity, and which kinds of component changed (the evidence model,
// evidence.ts, weighs each kind). Pure functions, so the accuracy benchmark
// runs the same code.
import { COMPONENTS, coverage, STABLE_WEIGHT_TOTAL, type ComponentName, type Components } from './components.js';

/**
 * A stored device token is believed when the fingerprint agrees at least this
 * much. Legitimate drift with a token (travel, docking, farbled core count)
 * scores above 0.75 with the weights above; unrelated devices mostly below
 * 0.7. bench/accuracy: no own token rejected between 0.6 and 0.7.
 */
export const TOKEN_CONSISTENCY = 0.7;

const tokens = (s: string) => new Set(s.split(/[\s,|()]+/).filter(Boolean));

function jaccard(a: string, b: string): number {
  const A = tokens(a);
  const B = tokens(b);
  if (A.size === 0 && B.size === 0) return 1;
  let inter = 0;
  for (const t of A) if (B.has(t)) inter++;
  return inter / (A.size + B.size - inter);
}

/**
 * Changes one device cannot make: OS/browser family, platform, a browser
 * downgrade. Not the hardware: Brave and anti-fingerprinting extensions
 * randomise the core count per session (bench/accuracy: Brave recall 19 %
 * with it, its own tokens were rejected); its weight does the work instead.
 */
function forbidden(stored: Components, current: Components): boolean {
  for (const n of ['browser', 'platform'] as const) {
    if (stored[n] !== undefined && current[n] !== undefined && stored[n] !== current[n]) return true;
  }
  if (stored.uaVersion !== undefined && current.uaVersion !== undefined && Number(current.uaVersion) < Number(stored.uaVersion)) {
    return true;
  }
  return false;
}

/**
 * What changed between two component sets, by the kind of change one device
 * makes: a browser update re-renders, a laptop docks to another screen, a
 * traveller's clock moves, fonts and languages are added now and then, a
 * taskbar moves and an extension hides other elements. A language list that
 * keeps the old one and adds to it counts as `languageAdded` (what a user
 * does), any other change of it as `language` (what tells two users apart).
 */
export const CHANGE_GROUPS = {
  render: ['canvas', 'webgl', 'webglCaps', 'audio', 'math', 'audioLatency'],
  screen: ['screen'],
  volatile: ['screenFrame', 'domBlockers'],
  timezone: ['timezone'],
  fonts: ['fonts', 'fontPreferences', 'plugins'],
  language: ['languages', 'locale'],
  hardware: ['hardware'],
  version: ['uaVersion'],
  other: ['vendor', 'touch', 'color', 'osCpu', 'mediaPrefs', 'storageFlags', 'safari'],
} as const satisfies Record<string, readonly ComponentName[]>;

export type ChangeGroup = keyof typeof CHANGE_GROUPS | 'languageAdded';
const GROUP_OF = new Map<ComponentName, ChangeGroup>(
  (Object.entries(CHANGE_GROUPS) as [ChangeGroup, readonly ComponentName[]][]).flatMap(([g, names]) => names.map((n) => [n, g] as const)),
);

export interface Similarity {
  score: number;
  /** Share of the stable weight present on both sides. */
  overlap: number;
  forbidden: boolean;
  /** Components present on both sides that differ, by group. */
  changed: Record<ChangeGroup, number>;
}

/** The comma-separated list `b` keeps every entry of `a`, in order, and adds to it. */
function extends_(a: string, b: string): boolean {
  const old = a.split(',');
  const now = b.split(',');
  let i = 0;
  for (const x of now) if (x === old[i]) i++;
  return i === old.length && now.length > old.length;
}

export function similarity(stored: Components, current: Components): Similarity {
  let weight = 0;
  let matched = 0;
  let stableBoth = 0;
  const changed: Record<ChangeGroup, number> = {
    render: 0,
    screen: 0,
    volatile: 0,
    timezone: 0,
    fonts: 0,
    language: 0,
    languageAdded: 0,
    hardware: 0,
    version: 0,
    other: 0,
  };
  for (const name of Object.keys(COMPONENTS) as ComponentName[]) {
    const spec = COMPONENTS[name];
    const a = stored[name];
    const b = current[name];
    if (a === undefined || b === undefined) continue;
    const group = GROUP_OF.get(name);
    if (a !== b && group) changed[name === 'languages' && extends_(a, b) ? 'languageAdded' : group]++;
    const s = a === b ? 1 : 'fuzzy' in spec && spec.fuzzy ? jaccard(a, b) : 0;
    weight += spec.weight;
    matched += spec.weight * s;
    if (spec.stable) stableBoth += spec.weight;
  }
  return {
    score: weight === 0 ? 0 : matched / weight,
    overlap: stableBoth / STABLE_WEIGHT_TOTAL,
    forbidden: forbidden(stored, current),
    changed,
  };
}

/**
 * Share of the stable weight a visit and a stored component set must both
 * hold for the set to vouch for the visit's device token. A token (or a
 * replayed cookie) is anyone's who copied it; what corroborates it is the
 * device's own signals, and a body that leaves them out (a stolen token with
 * no signals, or the few a script blocked half-way still sends) has too few
 * to tell the device from any other of its kind. Real browsers collect
 * 0.85–0.95 of it; a visit that lost one to three groups of signals keeps
 * above 0.65.
 */
export const TOKEN_OVERLAP = 0.6;

/**
 * How a device token's visitor and the visit agree: `consistent` when one of
 * the visitor's component sets has enough in common with the visit
 * (TOKEN_OVERLAP) and agrees with it (TOKEN_CONSISTENCY, no forbidden
 * change); `uncorroborated` when the visit carries too few signals to tell
 * (a copied token sent without them); `inconsistent` otherwise (another
 * device's signals).
 */
export type TokenCheck = 'consistent' | 'inconsistent' | 'uncorroborated';

export function tokenCheck(history: Components[], current: Components): TokenCheck {
  if (coverage(current) < TOKEN_OVERLAP) return 'uncorroborated';
  // A visitor that never showed enough to vouch (its first visits were sparse, and sparse sets are kept only while it
  // has no other) is judged on what it showed: its full set is then learnt, and vouches from the next visit on.
  const vouching = history.some((h) => coverage(h) >= TOKEN_OVERLAP);
  const agrees = history.some((h) => {
    const s = similarity(h, current);
    return !s.forbidden && (s.overlap >= TOKEN_OVERLAP || !vouching) && s.score >= TOKEN_CONSISTENCY;
  });
  return agrees ? 'consistent' : 'inconsistent';
}
