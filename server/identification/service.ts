// POST /v1/identify end to end: allowlist → metering → matching → risk →
// event and visit stored → compact result. Reading events and visit
// histories is server/events/ and server/visitors/.
import { createHash } from 'node:crypto';
import { ulid } from 'ulid';
import type { z } from 'zod';
import type { IdentifyRequestSchema, IdentifyResultSchema } from '../../contract/identify.js';
import type { SignalName } from '../../contract/signals.js';
import type { Clock } from '../clock.js';
import type { Meter } from '../metering/meter.js';
import { checkAllowlist } from '../projects/allowlist.js';
import type { EdgeFacts } from '../risk/edgeFacts.js';
import { assessRisk, VELOCITY_WINDOWS } from '../risk/engine.js';
import type { ApiKeyDoc } from '../store/apiKeys.js';
import type { EventDoc } from '../store/events.js';
import type { Store } from '../store/index.js';
import type { ProjectDoc } from '../store/projects.js';
import { coverage, extractComponents, type Signals } from './components.js';
import { confidenceOf } from './confidence.js';
import type { IdentifyHooks, IdentifyResponse } from './hooks.js';
import { link, remembered, type Visit } from './linker.js';
import { StoreIndex } from './storeIndex.js';
import { makeVisitId } from '../visitors/visitId.js';

type IdentifyRequest = z.infer<typeof IdentifyRequestSchema>;
type IdentifyResult = z.infer<typeof IdentifyResultSchema>;

const sha = (s: string) => createHash('sha256').update(s).digest('base64url');

export class IdentificationService {
  constructor(
    private readonly store: Store,
    private readonly meter: Meter,
    private readonly clock: Clock,
    private readonly hooks: IdentifyHooks = {},
  ) {}

  async identify(key: ApiKeyDoc, body: IdentifyRequest, edge: EdgeFacts, origin: string | undefined): Promise<IdentifyResponse> {
    const project = await this.store.projects.byId(key.projectId);
    checkAllowlist(project?.allowedDomains ?? [], key.type, body.url, origin);
    const reservation = await this.meter.admit(key);
    let result: IdentifyResult;
    try {
      result = await this.run(key, body, edge, project);
    } catch (err) {
      await reservation.release();
      throw err;
    }
    return this.hooks.respond ? this.hooks.respond(project, result) : result;
  }

  private async run(key: ApiKeyDoc, body: IdentifyRequest, edge: EdgeFacts, project: ProjectDoc | null): Promise<IdentifyResult> {
    const now = this.clock.now();
    const accountId = key.accountId;
    const signals = unwrap(body.signals);
    const components = extractComponents(signals);
    const token = signals.deviceToken?.token;
    const visit: Visit = { components, tokenHash: token ? sha(token) : null, network: edge.network, incognito: signals.incognito?.likely ?? false, now };

    const index = new StoreIndex(this.store, accountId, now);
    const match = await link(index, visit);
    const activity = { t: now, ip: edge.ip, country: edge.location.country };
    const confidence = confidenceOf({ kind: match.kind, p: match.p, coverage: coverage(components) });
    const requestId = `req_${ulid(now)}`;
    // Risk needs the visitor's recent activity with this visit, and the visit's summary needs risk: both are decided inside the record.
    let risk!: ReturnType<typeof assessRisk>;
    const rec = await index.record(match, visit, activity, VELOCITY_WINDOWS['24h'], (facts) => {
      risk = assessRisk(signals, edge, facts.recent, now);
      return {
        seq: facts.seq,
        requestId,
        id: makeVisitId(now, facts.seq),
        timestamp: now,
        country: edge.location.country,
        city: edge.location.city,
        region: edge.location.region,
        asn: edge.asn.asn,
        asnOrg: edge.asn.org,
        asnCategory: edge.asn.category,
        botProbability: risk.botProbability,
        confidence,
        riskFactors: risk.riskFactors,
      };
    });
    const visitId = makeVisitId(now, rec.seq);
    const signalsJson = JSON.stringify({ client: signals, server: risk.server });
    const ipLocation = {
      country: edge.location.country,
      city: edge.location.city,
      region: edge.location.region,
      latitude: edge.location.latitude,
      longitude: edge.location.longitude,
    };

    const event: EventDoc = {
      _id: requestId,
      accountId,
      projectId: key.projectId,
      visitorId: match.visitorId,
      visitId,
      visitSeq: rec.seq,
      keyType: key.type === 'test' ? 'test' : 'live',
      confidence,
      botProbability: risk.botProbability,
      suspectScore: risk.suspectScore,
      riskFactors: risk.riskFactors,
      verdicts: { ...risk.verdicts, velocity: risk.velocity },
      ip: edge.ip,
      ipLocation,
      url: body.url ?? '',
      referrer: body.referrer ?? '',
      tagJson: body.tag === undefined ? null : JSON.stringify(body.tag),
      linkedId: body.linkedId ?? null,
      suspect: false,
      signalsJson,
      clientTimestamp: body.timestamp,
      timestamp: now,
      createdAt: new Date(now),
    };
    await Promise.all([
      index.remember(remembered(rec.before, match, visit, match.kind === 'new')),
      this.store.events.insert(event, this.hooks.withEvent?.(project, event)),
    ]);
    this.hooks.stored?.(project, event);

    return {
      requestId,
      visitorId: match.visitorId,
      confidence,
      botProbability: risk.botProbability,
      suspectScore: risk.suspectScore,
      visitCount: rec.visitCount,
      firstSeenAt: rec.firstSeenAt,
      lastSeenAt: rec.previousSeenAt,
      riskFactors: risk.riskFactors,
      verdicts: risk.verdicts,
      ip: edge.ip,
      ipLocation,
      timestamp: now,
    };
  }
}

/** Request signals carry `{value, duration}`; stored and returned signals hold the value alone. */
function unwrap(signals: IdentifyRequest['signals']): Signals {
  const out: Record<string, unknown> = {};
  for (const [name, result] of Object.entries(signals) as [SignalName, { value: unknown } | undefined][]) {
    if (result) out[name] = result.value;
  }
  return out as Signals;
}
