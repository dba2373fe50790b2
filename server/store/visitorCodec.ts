// How a visitor document is stored: its many small objects (component sets,
// networks, tokens, suspects, recent activity, the current page of visit
// summaries) as JSON text, one string per list or per list item, so that
// the document has about 40 fields instead of about 400. Every visit
// rewrites the visitor, and a database that re-encodes whole documents on
// update (FerretDB: decode, apply, encode, write) pays per field: measured
// on the SQLite backend, a visitor's compare-and-swap went from 2.07 to
// 0.81 ms of the database's CPU (issue 27). Lists that grow at their end
// (recent activity, visit summaries) stay lists of strings, so a visit
// appends one string instead of rewriting them. Nothing queries inside
// these fields: a visitor is found by `_id` (server/store/identity.ts
// indexes what linking looks up).
//
// Recent activity and visit summaries are stored as arrays of their values
// (POSITIONAL). Documents written before this form hold objects; reads
// accept both, item by item, and a write stores what it changes in the new
// form.
import type { AsnUse, ComponentSet, PrefixUse, RecentActivity, Suspect, TokenUse, VisitorDoc } from './visitors.js';
import type { StoredVisit } from './visits.js';

type Text<T> = T | string;

/** The document as the collection holds it. */
export interface StoredVisitorDoc extends Omit<VisitorDoc, 'components' | 'prefixes' | 'asns' | 'tokens' | 'suspects' | 'recent' | 'visits'> {
  components: Text<ComponentSet>[];
  prefixes?: Text<PrefixUse[]>;
  asns?: Text<AsnUse[]>;
  tokens?: Text<TokenUse[]>;
  suspects?: Text<Suspect[]>;
  recent: Text<RecentActivity>[];
  visits?: Text<StoredVisit>[];
}

/** Lists stored as one text each (rewritten whole when they change). */
const WHOLE = ['prefixes', 'asns', 'tokens', 'suspects'] as const;
/** Lists stored as a list of texts (appended to as they grow). */
const ITEMWISE = ['components', 'recent', 'visits'] as const;
/**
 * Items stored as a JSON array of their values in this order (a visit
 * summary in about 140 bytes instead of 230): only an item with exactly
 * these fields, all present; any other keeps its names. New fields go at
 * the end, where older texts simply lack them.
 */
const POSITIONAL: Partial<Record<(typeof ITEMWISE)[number], readonly string[]>> = {
  recent: ['t', 'ip', 'country'] satisfies (keyof RecentActivity)[],
  visits: [
    'seq',
    'requestId',
    'id',
    'timestamp',
    'country',
    'city',
    'region',
    'asn',
    'asnOrg',
    'asnCategory',
    'botProbability',
    'confidence',
    'riskFactors',
  ] satisfies (keyof StoredVisit)[],
};

const text = (x: unknown): unknown => (x === null || typeof x === 'string' ? x : JSON.stringify(x));
const parsed = (x: unknown): unknown => (typeof x === 'string' ? JSON.parse(x) : x);

function itemText(x: unknown, fields: readonly string[] | undefined): unknown {
  if (!fields || x === null || typeof x !== 'object') return text(x);
  const o = x as Record<string, unknown>;
  const keys = Object.keys(o);
  const exact = keys.length === fields.length && fields.every((f) => o[f] !== undefined);
  return JSON.stringify(exact ? fields.map((f) => o[f]) : o);
}

function itemParsed(x: unknown, fields: readonly string[] | undefined): unknown {
  const v = parsed(x);
  if (!fields || !Array.isArray(v)) return v;
  const o: Record<string, unknown> = {};
  fields.forEach((f, i) => {
    if (i < v.length) o[f] = v[i];
  });
  return o;
}

function convert<T extends object>(doc: object, whole: (x: unknown) => unknown, item: (x: unknown, fields: readonly string[] | undefined) => unknown): T {
  const out: Record<string, unknown> = { ...doc };
  for (const k of WHOLE) if (out[k] !== undefined) out[k] = whole(out[k]);
  for (const k of ITEMWISE) if (Array.isArray(out[k])) out[k] = (out[k] as unknown[]).map((x) => item(x, POSITIONAL[k]));
  return out as T;
}

export const encodeVisitor = (doc: VisitorDoc): StoredVisitorDoc => convert(doc, text, itemText);
export const decodeVisitor = (stored: StoredVisitorDoc): VisitorDoc => convert(stored, parsed, itemParsed);
