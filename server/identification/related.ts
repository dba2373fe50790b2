// Related visitors: other visitors of a project that are the same physical
// device in another browser or browser profile. A visitorId is one browser
// (its storage, its engine's rendering); what the operating system and the
// hardware fix is shared by every browser of the machine: the OS and its
// platform string, the time zone, the core count, the screen, the GPU
// (named differently by each engine), the fonts the OS has, the colour and
// touch capabilities, the audio stack's sample rate, and the networks the
// machine is used on.
//
// The index: when a visitor is first seen on a network prefix, identify's
// existing bulk write adds it to the list of `r:<project>|<device key>|
// <prefix>` (the device key: OS, platform, time zone), with how many
// visitors ever joined it. Answering reads the visitor, its lists (one read)
// and the visitors on them (one read): browsers of one machine meet on its
// home or office network, look-alikes crowd a list and are told apart by
// what the OS and hardware show, and where they cannot be (identical fleet
// machines on one office network) the crowd keeps every probability low.
import { createHash } from 'node:crypto';
import { RELATED_EVIDENCE, RELATED_THRESHOLD } from '../../contract/visitors.js';
import type { RelatedList } from '../store/identity.js';
import type { Components } from './components.js';
import type { VisitNetwork } from './evidence.js';
import type { VisitorRecord } from './linker.js';

export type RelatedEvidence = (typeof RELATED_EVIDENCE)[number];

export interface Relative {
  visitorId: string;
  probability: number;
  /** The evidence family that weighed most. */
  evidence: RelatedEvidence;
  /** The latest time both were seen on a network they share (the earlier of their last visits from it). */
  lastSeenTogetherAt: number;
}

const sha = (s: string) => createHash('sha256').update(s).digest('base64url').slice(0, 24);

const osOf = (c: Components) => c.browser?.split('|')[1];
const coresOf = (c: Components) => (c.hardware ? (JSON.parse(c.hardware) as unknown[])[0] : undefined);

/**
 * What every browser of one machine reports alike and look-alikes share: OS,
 * platform, time zone (null when one is missing). Not the core count: Safari
 * on a Mac reports 8 whatever the chip, Brave and anti-fingerprinting
 * extensions make it up; it is evidence instead (pairEvidence).
 */
export function deviceKey(c: Components): string | null {
  const parts = [osOf(c), c.platform, c.timezone];
  if (parts.some((p) => p === undefined || p === null)) return null;
  return sha(JSON.stringify(parts));
}

/**
 * The list a visitor joins when first seen on a network in `projectId`: only
 * a fixed one (a home's, an office's). A carrier's address pools and a VPN's
 * exits are shared by strangers and change per session: two visitors met
 * there say nothing of one machine (bench/accuracy/related.ts).
 */
export function relatedIndexKey(projectId: string, c: Components, network: Pick<VisitNetwork, 'prefix' | 'kind'>): string | null {
  const device = deviceKey(c);
  return device && network.prefix && network.kind === 'fixed' ? `${projectId}|${device}|${network.prefix}` : null;
}

/** Every list the visitor may be on in the project: its device keys (one per kept component set) on each network it used. */
export function relatedKeysOf(projectId: string, v: VisitorRecord): { key: string; prefix: string }[] {
  const devices = [...new Set(v.components.map(deviceKey).filter((k): k is string => k !== null))];
  return v.prefixes.flatMap(({ p }) => devices.map((d) => ({ key: `${projectId}|${d}|${p}`, prefix: p })));
}

/**
 * The GPU as far as engines agree on its name: Chromium says
 * "ANGLE (Intel, Intel(R) UHD Graphics 620 (0x…) Direct3D11 …)", Firefox
 * the same without the PCI id; Safari says "Apple GPU" for any (unknown:
 * no evidence either way).
 */
export function gpuModel(webgl: string | undefined): string | null {
  if (!webgl) return null;
  const renderer = webgl.slice(webgl.indexOf('|') + 1).replace(REDUCED, '');
  if (/^Apple GPU$/.test(renderer)) return null;
  // PCI ids first (Chromium names them, Firefox does not), then the name up to the API or the closing parenthesis.
  const bare = renderer.replace(/ \(0x[0-9A-Fa-f]+\)/g, '').replace('ANGLE Metal Renderer: ', '');
  const name = (/^ANGLE \([^,]+, (.+?)(?: Direct3D| OpenGL| Metal|, |\)$)/.exec(bare)?.[1] ?? bare).trim();
  return name ? name.toLowerCase() : null;
}

/**
 * Firefox names a representative of the GPU's family, not the GPU ("GeForce
 * GTX 980, or similar" for any recent GeForce; webgl.sanitize-unmasked-renderer):
 * against such a name only the maker can agree.
 */
const REDUCED = /, or similar$/;
const MAKERS: readonly [RegExp, string][] = [
  [/nvidia|geforce|quadro|rtx/i, 'nvidia'],
  [/intel/i, 'intel'],
  [/amd|radeon|\bati\b/i, 'amd'],
  [/apple/i, 'apple'],
  [/adreno|qualcomm/i, 'qualcomm'],
  [/mali/i, 'arm'],
  [/powervr|imagination/i, 'imagination'],
];

/** The GPU's maker from its name; null when unknown or masked. */
export function gpuMaker(webgl: string | undefined): string | null {
  const model = gpuModel(webgl);
  return model ? (MAKERS.find(([re]) => re.test(model))?.[1] ?? null) : null;
}

const reduced = (v: VisitorRecord) => v.components.some((c) => c.webgl !== undefined && REDUCED.test(c.webgl));

/**
 * A core count that differs tells two machines apart (x0.1); one that
 * agrees says little (look-alikes share it). Not when either side cannot
 * be believed: Safari on a Mac reports 8 whatever the chip, and a count
 * that varies between a visitor's sets is made up (Brave, extensions).
 */
function coresEvidence(a: VisitorRecord, b: VisitorRecord): number {
  const counts = (v: VisitorRecord) =>
    new Set(
      v.components
        .map((c) => coresOf(c))
        .filter((n) => n !== undefined && n !== null)
        .map(String),
    );
  const believable = (v: VisitorRecord) => !v.components.some((c) => c.browser === 'Safari|Mac OS') && counts(v).size === 1;
  if (!believable(a) || !believable(b)) return 0;
  return overlaps(counts(a), counts(b)) ? 0 : Math.log(0.1);
}

/** The rendering engine of a component set's browser: every iOS browser is WebKit. */
function engineOf(c: Components): string | null {
  if (!c.browser) return null;
  const [browser, os] = c.browser.split('|');
  if (os === 'iOS' || browser === 'Safari') return 'webkit';
  return browser === 'Firefox' ? 'gecko' : 'blink';
}

const values = (v: VisitorRecord, pick: (c: Components) => string | null | undefined) =>
  new Set(v.components.map(pick).filter((x): x is string => x !== null && x !== undefined));

const overlaps = (a: Set<string>, b: Set<string>) => [...a].some((x) => b.has(x));

/**
 * How alike two font lists are (the newest sets'): Jaccard within one
 * engine; across engines the share of the shorter list in the longer (an
 * engine may not see every font the OS has: Firefox's font visibility).
 */
function fontSimilarity(a: string, b: string, acrossEngines: boolean): number {
  const x = new Set(a.split(','));
  const y = new Set(b.split(','));
  const shared = [...x].filter((f) => y.has(f)).length;
  return shared / ((acrossEngines ? Math.min(x.size, y.size) : x.size + y.size - shared) || 1);
}

/**
 * Likelihood ratios of "the same machine" against "a look-alike on the same
 * network", by family, as natural logs. A fact only one side collected
 * says nothing. Across engines some facts are reported differently by the
 * same machine, and weigh less: the GPU when Firefox names only its family
 * (the maker then), the screen (Firefox's follows page zoom, each browser
 * reports the monitor it is on), the language list (each browser has its
 * own; the first is the OS's).
 */
export function pairEvidence(a: VisitorRecord, b: VisitorRecord): Record<'hardware' | 'os_rendering', number> {
  let hardware = 0;
  let rendering = 0;
  const compare = (pick: (c: Components) => string | null | undefined, same: number, differ: number) => {
    const x = values(a, pick);
    const y = values(b, pick);
    if (!x.size || !y.size) return 0;
    return Math.log(overlaps(x, y) ? same : differ);
  };
  const [ea, eb] = [values(a, engineOf), values(b, engineOf)];
  const acrossEngines = ea.size > 0 && eb.size > 0 && !overlaps(ea, eb);
  hardware += reduced(a) || reduced(b) ? compare((c) => gpuMaker(c.webgl), 1.5, 0.1) : compare((c) => gpuModel(c.webgl), 5, 0.03);
  hardware += compare((c) => c.screen, 3, acrossEngines ? 0.4 : 0.15);
  hardware += coresEvidence(a, b);
  hardware += compare((c) => c.color, 1.5, 0.3);
  hardware += compare((c) => c.touch, 1, 0.1);
  hardware += compare((c) => c.audio?.split('|')[1], 1.3, 0.5);
  const fa = a.components[0]?.fonts;
  const fb = b.components[0]?.fonts;
  if (fa !== undefined && fb !== undefined) {
    const s = fontSimilarity(fa, fb, acrossEngines);
    rendering += Math.log(s === 1 ? 4 : s >= 0.8 ? 1.5 : 0.1);
  }
  rendering += acrossEngines ? compare((c) => c.languages?.split(',')[0], 1.3, 0.8) : compare((c) => c.languages, 1.3, 0.8);
  // The OS's fonts as they measure: the same in every engine and profile of one machine (bench/README), shared by
  // machines of one OS image, so only a difference tells (x0.2, not less: Windows and macOS were not measured).
  // Not against Firefox from another engine: its private windows and strict tracking protection hide all but the
  // OS's base fonts, so one machine can measure two ways there.
  const gecko = ea.has('gecko') || eb.has('gecko');
  if (!(acrossEngines && gecko)) rendering += compare((c) => c.fontMetrics, 1, 0.2);
  return { hardware, os_rendering: rendering };
}

/** Prior odds that another visitor on a network with the same device key is the same machine, before the evidence. */
export const RELATED_PRIOR_ODDS = 0.2;
/** Each further shared network multiplies the odds (capped at two): look-alikes rarely share a home and an office. */
const SHARED_NETWORK_LR = 4;

/**
 * The related visitors of `self` from its lists in the project: on each
 * list that holds `self`, every other visitor (`resolve` gives its current
 * record, following merges; null when deleted) is weighed by the evidence
 * and by the crowd of look-alikes as likely as it on that list (the list's
 * `n`, the unread part counted like the read one), whose number divides the
 * odds twice over: two or three alike are a machine's browsers, more an
 * office image. Each relative keeps its best list. Newest together first.
 */
export function relatedOf(self: VisitorRecord, lists: RelatedList[], resolve: (id: string) => VisitorRecord | null): Relative[] {
  const best = new Map<string, Relative>();
  const lastOn = (v: VisitorRecord, p: string) => v.prefixes.find((u) => u.p === p)?.last;
  for (const list of lists) {
    const members = new Map<string, VisitorRecord>();
    for (const id of list.visitorIds) {
      const v = resolve(id);
      if (v) members.set(v.id, v);
    }
    if (!members.delete(self.id)) continue;
    const weighed = [...members.values()].map((v) => {
      const e = pairEvidence(self, v);
      const shared = v.prefixes.filter((p) => self.prefixes.some((q) => q.p === p.p)).length;
      const network = Math.log(SHARED_NETWORK_LR) * Math.min(2, Math.max(0, shared - 1));
      return { v, e, network, lr: Math.exp(e.hardware + e.os_rendering + network) };
    });
    // Members not read (beyond the list's cap) are taken to look like those read.
    const unread = Math.max(0, list.n - list.visitorIds.length);
    const scale = 1 + unread / Math.max(1, list.visitorIds.length);
    for (const w of weighed) {
      // A machine has a few browsers and profiles; more visitors as alike as this one on the list are a fleet of one image.
      const others = weighed.filter((o) => o !== w && o.lr >= w.lr / 10).length * scale + (scale - 1);
      const odds = (RELATED_PRIOR_ODDS * w.lr) / Math.max(1, others) ** 2;
      const probability = Math.round((odds / (1 + odds)) * 1000) / 1000;
      const families: [RelatedEvidence, number][] = [
        ['hardware', w.e.hardware],
        ['os_rendering', w.e.os_rendering],
        ['network', w.network],
      ];
      const evidence = families.reduce((x, y) => (y[1] > x[1] ? y : x))[0];
      const together = Math.min(lastOn(self, list.prefix) ?? 0, lastOn(w.v, list.prefix) ?? 0);
      const prior = best.get(w.v.id);
      if (!prior || probability > prior.probability)
        best.set(w.v.id, { visitorId: w.v.id, probability, evidence, lastSeenTogetherAt: Math.max(together, prior?.lastSeenTogetherAt ?? 0) });
      else prior.lastSeenTogetherAt = Math.max(prior.lastSeenTogetherAt, together);
    }
  }
  return [...best.values()]
    .filter((r) => r.probability >= RELATED_THRESHOLD)
    .sort((x, y) => y.lastSeenTogetherAt - x.lastSeenTogetherAt || (x.visitorId < y.visitorId ? -1 : 1));
}
