// The curated edge tables, kept as JSON in server/edge/data/ (each file says
// where its facts come from) and checked against these schemas when the
// module loads: a malformed edit fails start-up and the tests, never a
// lookup. Duplicates and overlaps are the tests' job (test/server/edge/curated.test.ts).
import { z } from 'zod';
import { ASN_CATEGORIES } from '../../contract/edge.js';
import { parseCidr } from './address.js';
import carriersJson from './data/mobile-carriers.json' with { type: 'json' };
import networksJson from './data/networks.json' with { type: 'json' };
import reservedJson from './data/reserved.json' with { type: 'json' };

const Text = z.string().trim().min(1);
const Asn = z.number().int().min(1).max(0xffffffff);
const Cidr = z.string().refine((s) => parseCidr(s) !== null && s.includes('/'), 'not a CIDR');

export const NetworksSchema = z
  .object({
    about: Text,
    source: Text,
    groups: z.array(
      z
        .object({
          // Mobile operators come from mobile-carriers.json; UNKNOWN is what no table says.
          category: z.enum(ASN_CATEGORIES).refine((c) => c !== 'MOBILE_CARRIER' && c !== 'UNKNOWN', 'category not curated here'),
          why: Text,
          networks: z.array(z.object({ asn: Asn, name: Text, note: Text.optional() }).strict()).min(1),
        })
        .strict(),
    ),
  })
  .strict();

export const CarriersSchema = z
  .object({
    about: Text,
    source: Text,
    checked: Text,
    fields: z.record(Text),
    notListed: Text,
    howToAdd: Text,
    carriers: z.array(
      z
        .object({
          asn: Asn,
          operator: Text,
          country: z.string().regex(/^[A-Z]{2}$/),
          mobileOnly: z.boolean(),
          org: Text,
          note: Text.optional(),
        })
        .strict(),
    ),
  })
  .strict();

const Block = z.object({ cidr: Cidr, what: Text }).strict();
export const ReservedSchema = z.object({ about: Text, source: Text, reserved: z.array(Block).min(1), exceptions: z.array(Block) }).strict();

export type NetworkGroup = z.infer<typeof NetworksSchema>['groups'][number];
export type MobileCarrier = z.infer<typeof CarriersSchema>['carriers'][number];

export const CURATED_NETWORKS: readonly NetworkGroup[] = NetworksSchema.parse(networksJson).groups;
export const MOBILE_CARRIERS: readonly MobileCarrier[] = CarriersSchema.parse(carriersJson).carriers;
export const RESERVED_SPACE = ReservedSchema.parse(reservedJson);
