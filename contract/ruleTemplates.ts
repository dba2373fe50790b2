// Rules a project can start from (docs/decisions.md, templates), as plain
// data so the dashboard's Rules page offers them; a test compiles each.
export interface RuleTemplate {
  readonly id: string;
  readonly name: string;
  readonly expression: string;
  readonly action: 'allow' | 'challenge' | 'review' | 'block';
  /** What it catches, and what it needs (a list to create). */
  readonly catches: string;
}

export const RULE_TEMPLATES: readonly RuleTemplate[] = [
  {
    id: 'block-bad-bots',
    name: 'Block bad bots',
    expression: "verdicts.bot.result && verdicts.bot.kind == 'bad'",
    action: 'block',
    catches:
      'Headless browsers, automation frameworks, HTTP libraries and bots that claim a name they fail to prove (spoofed Googlebot). Verified and signed bots (search engines, AI assistants proven by their operator) pass.',
  },
  {
    id: 'block-tor-and-blocklisted-ips',
    name: 'Block Tor and blocklisted IPs',
    expression: "verdicts.tor.result || verdicts.ipBlocklist.result || inList('blocked-ips', ip)",
    action: 'block',
    catches:
      'Tor exit nodes, addresses on the public blocklists the service loads, and your own `blocked-ips` list (create it, kind ip: addresses and CIDR ranges).',
  },
  {
    id: 'review-vpn-new-fast',
    name: 'Review a new visitor on a VPN moving fast',
    expression: 'verdicts.vpn.result && newVisitor && (velocity.events.h1 > 5 || velocity.distinctIp.h1 > 3)',
    action: 'review',
    catches:
      'A device seen for the first time, behind a VPN, already making many requests or changing addresses within the hour: a typical account-farming or card-testing start.',
  },
  {
    id: 'challenge-private-signups',
    name: 'Challenge private windows on sign-up',
    expression: "verdicts.incognito.result && urlPath.startsWith('/signup')",
    action: 'challenge',
    catches:
      'Sign-ups from private windows, where storage is thrown away after each session: the usual way to open account after account. Adjust the path to your sign-up page.',
  },
];
