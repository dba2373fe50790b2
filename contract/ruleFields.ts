// What a decision rule's CEL expression sees and may call, as plain data (no
// zod), so that the dashboard's rule editor bundles it without the
// contract's schemas. The server's engine declares its variables and allows
// its functions from these same lists (server/decisions/engine.ts), so the
// documentation cannot drift from what an expression type-checks against.

export const RULE_ACTIONS = ['allow', 'challenge', 'review', 'block'] as const;
export type RuleAction = (typeof RULE_ACTIONS)[number];

/** live: the first matching live rule decides; test: evaluated and reported (testMatches), never acting. */
export const RULE_MODES = ['live', 'test'] as const;
export type RuleMode = (typeof RULE_MODES)[number];

/** Characters an expression may have. */
export const RULE_EXPRESSION_MAX = 4000;

export interface RuleField {
  /** Dotted path as an expression writes it. */
  readonly path: string;
  /** CEL type: string, int, double, bool, list(string), map(string, dyn). */
  readonly type: string;
  readonly description: string;
}

/** Every field of the event's view. A missing value is '' , 0, false or {} (never absent), so no expression meets a missing field. */
export const RULE_FIELDS: ReadonlyArray<RuleField> = [
  { path: 'requestId', type: 'string', description: 'The event (req_…)' },
  { path: 'visitorId', type: 'string', description: 'The device' },
  { path: 'visitCount', type: 'int', description: 'Identifications of this device so far, this one included' },
  { path: 'firstSeenAt', type: 'int', description: 'When the device was first seen (Unix ms)' },
  { path: 'timestamp', type: 'int', description: 'When the event happened (Unix ms)' },
  { path: 'newVisitor', type: 'bool', description: 'First identification of this device (visitCount == 1)' },
  { path: 'confidence', type: 'double', description: 'Confidence 0–1 that visitorId is this device’s own' },
  { path: 'botProbability', type: 'double', description: 'Probability 0–1 that the client is automated' },
  { path: 'suspectScore', type: 'int', description: 'Suspect score 0–100' },
  { path: 'riskFactors', type: 'list(string)', description: 'Active risk factors, e.g. TOR_EXIT_NODE, VPN_DETECTED, HEADLESS_BROWSER' },
  { path: 'verdicts.bot.result', type: 'bool', description: 'Automation detected (kind good or bad, or probability ≥ 0.5)' },
  { path: 'verdicts.bot.probability', type: 'double', description: 'Bot probability 0–1' },
  { path: 'verdicts.bot.kind', type: 'string', description: "'human', 'good' (a verified or signed bot) or 'bad'" },
  { path: 'verdicts.bot.category', type: 'string', description: "Bot category, e.g. search_crawler, ai_agent, browser_automation; '' when none" },
  { path: 'verdicts.bot.provider', type: 'string', description: "Operator of a named bot, e.g. Google; '' when none" },
  { path: 'verdicts.bot.name', type: 'string', description: "Name of a named bot, e.g. Googlebot; '' when none" },
  { path: 'verdicts.bot.identity', type: 'string', description: "How far the name is proven: verified, signed, spoofed, unknown; '' when none" },
  { path: 'verdicts.vpn.result', type: 'bool', description: 'VPN detected' },
  { path: 'verdicts.vpn.confidence', type: 'double', description: 'Confidence 0–1 of the VPN verdict' },
  { path: 'verdicts.tor.result', type: 'bool', description: 'The IP is a Tor exit node' },
  { path: 'verdicts.proxy.result', type: 'bool', description: 'The IP is a known proxy' },
  { path: 'verdicts.incognito.result', type: 'bool', description: 'Private browsing mode likely' },
  { path: 'verdicts.headless.result', type: 'bool', description: 'Headless browser or automation markers' },
  { path: 'verdicts.virtualMachine.result', type: 'bool', description: 'Running in a virtual machine' },
  { path: 'verdicts.devtools.result', type: 'bool', description: 'Developer tools open' },
  { path: 'verdicts.highActivity.result', type: 'bool', description: 'Unusually many identifications of this device in the last hour or day' },
  { path: 'verdicts.ipBlocklist.result', type: 'bool', description: 'The IP is on a configured blocklist' },
  { path: 'verdicts.tampering.result', type: 'bool', description: 'Browser APIs tampered with (anomalyScore ≥ 50)' },
  { path: 'verdicts.tampering.anomalyScore', type: 'double', description: 'Tampering anomaly score 0–100' },
  { path: 'verdicts.privacyBrowser.result', type: 'bool', description: 'A privacy-focused browser' },
  { path: 'verdicts.privacyBrowser.name', type: 'string', description: "Its name, e.g. Brave; '' when none" },
  { path: 'velocity.events.m5', type: 'int', description: 'Identifications of this device in the last 5 minutes' },
  { path: 'velocity.events.h1', type: 'int', description: '… in the last hour' },
  { path: 'velocity.events.h24', type: 'int', description: '… in the last 24 hours' },
  { path: 'velocity.distinctIp.m5', type: 'int', description: 'Distinct IPs of this device in the last 5 minutes' },
  { path: 'velocity.distinctIp.h1', type: 'int', description: '… in the last hour' },
  { path: 'velocity.distinctIp.h24', type: 'int', description: '… in the last 24 hours' },
  { path: 'velocity.distinctCountry.m5', type: 'int', description: 'Distinct IP countries of this device in the last 5 minutes' },
  { path: 'velocity.distinctCountry.h1', type: 'int', description: '… in the last hour' },
  { path: 'velocity.distinctCountry.h24', type: 'int', description: '… in the last 24 hours' },
  { path: 'ip', type: 'string', description: 'Client IP address' },
  { path: 'ipVersion', type: 'int', description: '4 or 6' },
  { path: 'ipLocation.country', type: 'string', description: "ISO 3166-1 alpha-2 country of the IP, e.g. DE; '' when unknown" },
  { path: 'ipLocation.city', type: 'string', description: "City of the IP; '' when unknown" },
  { path: 'ipLocation.region', type: 'string', description: "Region or state of the IP; '' when unknown" },
  { path: 'ipLocation.asn', type: 'int', description: 'Autonomous System Number of the IP; 0 when unknown' },
  { path: 'ipLocation.asnOrg', type: 'string', description: "Organisation of the AS; '' when unknown" },
  {
    path: 'ipLocation.networkCategory',
    type: 'string',
    description: "Kind of network: RESIDENTIAL_ISP, MOBILE_CARRIER, DATACENTER, VPN_COMMERCIAL, TOR_EXIT, EDUCATION, GOVERNMENT, CDN; '' when unknown",
  },
  { path: 'linkedId', type: 'string', description: "Your identifier sent with the event; '' when none" },
  { path: 'linkedIdVouched', type: 'bool', description: 'Your server vouched for linkedId (signed proof or first-party proxy)' },
  {
    path: 'tag',
    type: 'map(string, dyn)',
    description: 'The tag object sent with the event, as sent ({} when none); numbers are doubles, e.g. tag.plan == "pro"',
  },
  { path: 'browser.name', type: 'string', description: "Browser from the User-Agent, e.g. Chrome; '' when unknown" },
  { path: 'browser.version', type: 'string', description: "Its full version, e.g. 124.0.6367.60; '' when unknown" },
  { path: 'browser.major', type: 'int', description: 'Its major version, e.g. 124; 0 when unknown' },
  { path: 'os.name', type: 'string', description: "Operating system, e.g. Windows, Mac OS, Android; '' when unknown" },
  { path: 'os.version', type: 'string', description: "Its version; '' when unknown" },
  { path: 'device.type', type: 'string', description: "mobile, tablet, smarttv, console, wearable, embedded; '' for desktops and when unknown" },
  { path: 'device.vendor', type: 'string', description: "Device vendor, e.g. Apple; '' when unknown" },
  { path: 'device.model', type: 'string', description: "Device model, e.g. iPhone; '' when unknown" },
  { path: 'userAgent', type: 'string', description: "navigator.userAgent; '' when not collected" },
  { path: 'url', type: 'string', description: "Page URL; '' when none" },
  { path: 'urlPath', type: 'string', description: "Path of the page URL, e.g. /checkout; '' when none" },
  { path: 'origin', type: 'string', description: "scheme://host[:port] of the page URL; '' when none" },
  { path: 'referrer', type: 'string', description: "Referring page URL; '' when none" },
];

export interface RuleFunction {
  readonly name: string;
  readonly signature: string;
  readonly description: string;
  readonly example: string;
}

/** The functions and macros an expression may call; any other is refused when the rule is saved. */
export const RULE_FUNCTIONS: ReadonlyArray<RuleFunction> = [
  {
    name: 'inList',
    signature: 'inList(name: string, value: string | int) -> bool',
    description:
      "Exact membership in the project's list `name` (an ip also matches the list's CIDR ranges; expired entries do not match). An unknown list is false.",
    example: "inList('blocked_countries', ipLocation.country)",
  },
  {
    name: 'cidr',
    signature: 'cidr(ip: string, range: string) -> bool',
    description: 'The IPv4 or IPv6 address ip is inside the CIDR range. An unparsable ip or range is false.',
    example: "cidr(ip, '203.0.113.0/24')",
  },
  {
    name: 'size',
    signature: 'size(string | list | map) -> int, or x.size()',
    description: 'Length of a string, list or map',
    example: 'size(riskFactors) >= 3',
  },
  { name: 'startsWith', signature: 'string.startsWith(prefix: string) -> bool', description: 'Starts with prefix', example: "urlPath.startsWith('/admin')" },
  { name: 'endsWith', signature: 'string.endsWith(suffix: string) -> bool', description: 'Ends with suffix', example: "referrer.endsWith('.example')" },
  { name: 'contains', signature: 'string.contains(part: string) -> bool', description: 'Contains part', example: "userAgent.contains('HeadlessChrome')" },
  {
    name: 'matches',
    signature: 'string.matches(pattern: string literal) -> bool',
    description:
      'RE2 regular expression search (unanchored: use ^ and $; (?i) for case-insensitive). The pattern must be a string literal; an expression may have 8 distinct patterns of 256 characters in all',
    example: "userAgent.matches('(?i)(bot|crawler|spider)')",
  },
  {
    name: 'lowerAscii',
    signature: 'string.lowerAscii() -> string',
    description: 'ASCII letters in lower case',
    example: "browser.name.lowerAscii() == 'chrome'",
  },
  {
    name: 'upperAscii',
    signature: 'string.upperAscii() -> string',
    description: 'ASCII letters in upper case',
    example: 'tag.country.upperAscii() != ipLocation.country',
  },
  { name: 'trim', signature: 'string.trim() -> string', description: 'Without leading and trailing white space', example: "linkedId.trim() == ''" },
  {
    name: 'in',
    signature: 'value in list | map -> bool',
    description: 'Membership in a list, or a key of a map',
    example: "ipLocation.country in ['KP', 'IR']",
  },
  { name: 'has', signature: 'has(map.key) -> bool', description: 'The key is present (for tag)', example: 'has(tag.plan)' },
  {
    name: 'exists',
    signature: 'list.exists(x, predicate) -> bool',
    description: 'Some element satisfies the predicate. A comprehension over a list of the tag (which may hold thousands) is refused as too costly: use in',
    example: "riskFactors.exists(f, f.startsWith('VPN'))",
  },
  {
    name: 'all',
    signature: 'list.all(x, predicate) -> bool',
    description: 'Every element satisfies the predicate',
    example: "riskFactors.all(f, f != 'TOR_EXIT_NODE')",
  },
  {
    name: 'exists_one',
    signature: 'list.exists_one(x, predicate) -> bool',
    description: 'Exactly one element satisfies the predicate',
    example: "riskFactors.exists_one(f, f == 'PROXY')",
  },
  {
    name: 'filter',
    signature: 'list.filter(x, predicate) -> list',
    description: 'The elements that satisfy the predicate',
    example: "riskFactors.filter(f, f != 'INCOGNITO').size() > 2",
  },
  {
    name: 'map',
    signature: 'list.map(x, transform) -> list',
    description: 'Each element transformed',
    example: "riskFactors.map(f, f.lowerAscii()).exists(f, f.contains('vpn'))",
  },
  {
    name: 'int',
    signature: 'int(double | string) -> int',
    description: 'Conversion to int (an unparsable string is an error: the rule is skipped)',
    example: 'int(verdicts.tampering.anomalyScore) > 50',
  },
  {
    name: 'double',
    signature: 'double(int | string) -> double',
    description: 'Conversion to double',
    example: 'double(suspectScore) / 100.0 > botProbability',
  },
  { name: 'string', signature: 'string(int | double | bool) -> string', description: 'Conversion to string', example: 'string(ipLocation.asn) == tag.asn' },
];
