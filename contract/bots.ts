// The bot vocabulary as plain constants (no zod), so that the dashboard's
// browser bundle can name categories without the contract's schemas.

/** What kind of automation a bot is. */
export const BOT_CATEGORIES = [
  'search_crawler',
  'ai_crawler',
  'ai_assistant',
  'ai_agent',
  'seo_marketing',
  'monitoring',
  'social_preview',
  'feed_reader',
  'archiver',
  'scraper',
  'browser_automation',
  'unknown_automation',
] as const;
export type BotCategory = (typeof BOT_CATEGORIES)[number];

/** How far a bot's name is proven. */
export const BOT_IDENTITIES = ['verified', 'signed', 'spoofed', 'unknown'] as const;
export type BotIdentity = (typeof BOT_IDENTITIES)[number];

/** human: no automation seen; good: a bot proven to be who it says (verified or signed); bad: any other automation, spoofed names included. */
export const BOT_VERDICT_KINDS = ['human', 'good', 'bad'] as const;
