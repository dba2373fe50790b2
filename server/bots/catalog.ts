// The bots we know by name: what their User-Agent says, who runs them, what
// they are for, and how their operator says a request from them can be told
// from one that only borrows the name. A User-Agent is a claim anyone can
// write; verify.ts checks it against the address it came from.
//
// Order matters: the first entry whose `ua` matches names the bot, so the
// more specific names come before the ones they contain (Feedly's fetcher
// writes "like FeedFetcher-Google", AdIdxBot links to bingbot.htm; Google-InspectionTool's mobile UA carries
// a Chrome token). Tokens that only appear in robots.txt (Google-Extended,
// Applebot-Extended) are not User-Agents and are not listed.

// The categories and identities are the contract's (contract/risk.ts BotInfo).
import { BOT_CATEGORIES, type BotCategory, type BotIdentity } from '../../contract/risk.js';

export { BOT_CATEGORIES, type BotCategory, type BotIdentity };

/**
 * How an operator says its bot is verified:
 * - ranges: the address is in the IP ranges it publishes (server/bots/data/<list>.json, refreshed by scripts/refresh-lists.mjs);
 * - rdns: the address's reverse DNS name ends in one of its domains and that name resolves back to the address
 *   (`forward: false` where the operator documents the reverse lookup only, as Baidu does);
 * - none: the operator publishes no way (or it is not an operator at all: an HTTP library).
 */
export type BotVerify = { method: 'ranges'; list: string } | { method: 'rdns'; suffixes: string[]; forward?: boolean } | { method: 'none' };

export interface BotEntry {
  name: string;
  provider: string;
  category: BotCategory;
  ua: RegExp;
  verify: BotVerify;
  /** The operator's page that documents the bot (and its verification, where it has one). */
  source: string;
}

const ranges = (list: string): BotVerify => ({ method: 'ranges', list });
const rdns = (...suffixes: string[]): BotVerify => ({ method: 'rdns', suffixes });
const NONE: BotVerify = { method: 'none' };

const GOOGLE_DOC = 'https://developers.google.com/crawling/docs/crawlers-fetchers/overview-google-crawlers';
const GOOGLE_SPECIAL = 'https://developers.google.com/crawling/docs/crawlers-fetchers/google-special-case-crawlers';
const GOOGLE_USER = 'https://developers.google.com/crawling/docs/crawlers-fetchers/google-user-triggered-fetchers';
const OPENAI_DOC = 'https://platform.openai.com/docs/bots';
const ANTHROPIC_DOC = 'https://support.claude.com/en/articles/8896518-does-anthropic-crawl-data-from-the-web-and-how-can-site-owners-block-the-crawler';
const PERPLEXITY_DOC = 'https://docs.perplexity.ai/guides/bots';
const META_DOC = 'https://developers.facebook.com/docs/sharing/webmasters/web-crawlers';
const HTTP_LIBRARY = 'https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/User-Agent';

export const BOT_CATALOG: readonly BotEntry[] = [
  // --- Google (ranges: common-crawlers / special-crawlers / user-triggered-fetchers; rDNS googlebot.com / google.com works too)
  {
    name: 'Google-InspectionTool',
    provider: 'Google',
    category: 'search_crawler',
    ua: /\bGoogle-InspectionTool\b/i,
    verify: ranges('googlebot'),
    source: GOOGLE_DOC,
  },
  { name: 'GoogleOther', provider: 'Google', category: 'search_crawler', ua: /\bGoogleOther\b/i, verify: ranges('googlebot'), source: GOOGLE_DOC },
  {
    name: 'Google-CloudVertexBot',
    provider: 'Google',
    category: 'ai_crawler',
    ua: /\bGoogle-CloudVertexBot\b/i,
    verify: ranges('googlebot'),
    source: GOOGLE_DOC,
  },
  { name: 'Storebot-Google', provider: 'Google', category: 'search_crawler', ua: /\bStorebot-Google\b/i, verify: ranges('googlebot'), source: GOOGLE_DOC },
  {
    name: 'AdsBot-Google',
    provider: 'Google',
    category: 'search_crawler',
    ua: /\bAdsBot-Google(?:-Mobile)?\b/i,
    verify: ranges('google-special-crawlers'),
    source: GOOGLE_SPECIAL,
  },
  {
    name: 'Mediapartners-Google',
    provider: 'Google',
    category: 'search_crawler',
    ua: /\bMediapartners-Google\b/i,
    verify: ranges('google-special-crawlers'),
    source: GOOGLE_SPECIAL,
  },
  {
    name: 'APIs-Google',
    provider: 'Google',
    category: 'search_crawler',
    ua: /\bAPIs-Google\b/i,
    verify: ranges('google-special-crawlers'),
    source: GOOGLE_SPECIAL,
  },
  {
    name: 'Google-Safety',
    provider: 'Google',
    category: 'search_crawler',
    ua: /\bGoogle-Safety\b/i,
    verify: ranges('google-special-crawlers'),
    source: GOOGLE_SPECIAL,
  },
  { name: 'Feedly', provider: 'Feedly', category: 'feed_reader', ua: /\bFeedly(?:Bot)?\b/i, verify: NONE, source: 'https://feedly.com/fetcher.html' },
  {
    name: 'FeedFetcher-Google',
    provider: 'Google',
    category: 'feed_reader',
    ua: /\bFeedFetcher-Google\b/i,
    verify: ranges('google-user-triggered-fetchers'),
    source: GOOGLE_USER,
  },
  {
    name: 'Google-Read-Aloud',
    provider: 'Google',
    category: 'ai_assistant',
    ua: /\bGoogle-Read-Aloud\b/i,
    verify: ranges('google-user-triggered-fetchers'),
    source: GOOGLE_USER,
  },
  {
    name: 'Google-Site-Verification',
    provider: 'Google',
    category: 'monitoring',
    ua: /\bGoogle-Site-Verification\b/i,
    verify: ranges('google-user-triggered-fetchers'),
    source: GOOGLE_USER,
  },
  {
    name: 'GoogleProducer',
    provider: 'Google',
    category: 'feed_reader',
    ua: /\bGoogleProducer\b/i,
    verify: ranges('google-user-triggered-fetchers'),
    source: GOOGLE_USER,
  },
  {
    name: 'Google-NotebookLM',
    provider: 'Google',
    category: 'ai_assistant',
    ua: /\bGoogle-NotebookLM\b/i,
    verify: ranges('google-user-triggered-fetchers'),
    source: GOOGLE_USER,
  },
  {
    name: 'Googlebot',
    provider: 'Google',
    category: 'search_crawler',
    ua: /\bGooglebot(?:-Image|-Video|-News)?\b/i,
    verify: ranges('googlebot'),
    source: GOOGLE_DOC,
  },

  // --- Other search engines
  {
    name: 'AdIdxBot',
    provider: 'Microsoft',
    category: 'search_crawler',
    ua: /\badidxbot\b/i,
    verify: ranges('bingbot'),
    source: 'https://www.bing.com/webmasters/help/which-crawlers-does-bing-use-8c184ec0',
  },
  {
    name: 'bingbot',
    provider: 'Microsoft',
    category: 'search_crawler',
    ua: /\bbingbot\b/i,
    verify: ranges('bingbot'),
    source: 'https://www.bing.com/webmasters/help/verifying-that-bingbot-is-bingbot-3905dc26',
  },
  {
    name: 'Applebot',
    provider: 'Apple',
    category: 'search_crawler',
    ua: /\bApplebot\b/i,
    verify: ranges('applebot'),
    source: 'https://support.apple.com/en-us/119829',
  },
  {
    name: 'DuckAssistBot',
    provider: 'DuckDuckGo',
    category: 'ai_assistant',
    ua: /\bDuckAssistBot\b/i,
    verify: NONE,
    source: 'https://duckduckgo.com/duckduckgo-help-pages/results/duckassistbot',
  },
  {
    name: 'DuckDuckBot',
    provider: 'DuckDuckGo',
    category: 'search_crawler',
    ua: /\bDuckDuckBot\b/i,
    verify: ranges('duckduckbot'),
    source: 'https://duckduckgo.com/duckduckgo-help-pages/results/duckduckbot',
  },
  {
    name: 'YandexBot',
    provider: 'Yandex',
    category: 'search_crawler',
    ua: /\bYandex(?:Bot|Images|Mobile\w*|Video\w*|Metrika|Accessibility\w*|Favicons|Market|News|Blogs|Direct\w*|RenderResourcesBot|Additional\w*)\b/i,
    verify: rdns('yandex.ru', 'yandex.net', 'yandex.com'),
    source: 'https://yandex.com/support/webmaster/robot-workings/check-yandex-robots.html',
  },
  {
    name: 'Baiduspider',
    provider: 'Baidu',
    category: 'search_crawler',
    ua: /\bBaiduspider(?:-\w+)?\b/i,
    verify: { method: 'rdns', suffixes: ['baidu.com', 'baidu.jp'], forward: false },
    source: 'https://help.baidu.com/question?prod_id=99&class=476&id=2996',
  },
  {
    name: 'PetalBot',
    provider: 'Huawei',
    category: 'search_crawler',
    ua: /\bPetalBot\b/i,
    verify: rdns('petalsearch.com'),
    source: 'https://webmaster.petalsearch.com/site/petalbot',
  },
  {
    name: 'Yahoo! Slurp',
    provider: 'Yahoo',
    category: 'search_crawler',
    ua: /\bYahoo! Slurp\b/i,
    verify: rdns('crawl.yahoo.net'),
    source: 'https://help.yahoo.com/kb/SLN22600.html',
  },
  {
    name: 'SeznamBot',
    provider: 'Seznam',
    category: 'search_crawler',
    ua: /\bSeznamBot\b/i,
    verify: rdns('seznam.cz'),
    source: 'https://o-seznam.cz/napoveda/vyhledavani/en/seznambot-crawler/',
  },
  { name: 'Qwantbot', provider: 'Qwant', category: 'search_crawler', ua: /\bQwantbot\b/i, verify: NONE, source: 'https://help.qwant.com/bot/' },
  { name: 'MojeekBot', provider: 'Mojeek', category: 'search_crawler', ua: /\bMojeekBot\b/i, verify: NONE, source: 'https://www.mojeek.com/bot.html' },

  // --- AI companies
  { name: 'GPTBot', provider: 'OpenAI', category: 'ai_crawler', ua: /\bGPTBot\b/i, verify: ranges('gptbot'), source: OPENAI_DOC },
  { name: 'ChatGPT-User', provider: 'OpenAI', category: 'ai_assistant', ua: /\bChatGPT-User\b/i, verify: ranges('chatgpt-user'), source: OPENAI_DOC },
  { name: 'OAI-SearchBot', provider: 'OpenAI', category: 'search_crawler', ua: /\bOAI-SearchBot\b/i, verify: ranges('oai-searchbot'), source: OPENAI_DOC },
  // Anthropic publishes one list (claude.com/crawling/bots.json) for all its bots.
  { name: 'Claude-User', provider: 'Anthropic', category: 'ai_assistant', ua: /\bClaude-User\b/i, verify: ranges('claudebot'), source: ANTHROPIC_DOC },
  {
    name: 'Claude-SearchBot',
    provider: 'Anthropic',
    category: 'search_crawler',
    ua: /\bClaude-SearchBot\b/i,
    verify: ranges('claudebot'),
    source: ANTHROPIC_DOC,
  },
  { name: 'ClaudeBot', provider: 'Anthropic', category: 'ai_crawler', ua: /\bClaudeBot\b/i, verify: ranges('claudebot'), source: ANTHROPIC_DOC },
  {
    name: 'Perplexity-User',
    provider: 'Perplexity',
    category: 'ai_assistant',
    ua: /\bPerplexity-User\b/i,
    verify: ranges('perplexity-user'),
    source: PERPLEXITY_DOC,
  },
  {
    name: 'PerplexityBot',
    provider: 'Perplexity',
    category: 'search_crawler',
    ua: /\bPerplexityBot\b/i,
    verify: ranges('perplexitybot'),
    source: PERPLEXITY_DOC,
  },
  {
    name: 'Amazonbot',
    provider: 'Amazon',
    category: 'ai_crawler',
    ua: /\bAmazonbot\b/i,
    verify: rdns('crawl.amazonbot.amazon'),
    source: 'https://developer.amazon.com/amazonbot',
  },
  { name: 'meta-externalagent', provider: 'Meta', category: 'ai_crawler', ua: /\bmeta-externalagent\b/i, verify: ranges('meta'), source: META_DOC },
  { name: 'meta-externalfetcher', provider: 'Meta', category: 'ai_assistant', ua: /\bmeta-externalfetcher\b/i, verify: ranges('meta'), source: META_DOC },
  { name: 'Bytespider', provider: 'ByteDance', category: 'ai_crawler', ua: /\bBytespider\b/i, verify: NONE, source: 'https://bytedance.com/' },
  { name: 'CCBot', provider: 'Common Crawl', category: 'ai_crawler', ua: /\bCCBot\b/i, verify: ranges('ccbot'), source: 'https://commoncrawl.org/ccbot' },
  { name: 'cohere-ai', provider: 'Cohere', category: 'ai_crawler', ua: /\bcohere-ai\b/i, verify: NONE, source: 'https://cohere.com/' },
  {
    name: 'MistralAI-User',
    provider: 'Mistral AI',
    category: 'ai_assistant',
    ua: /\bMistralAI-User\b/i,
    verify: NONE,
    source: 'https://docs.mistral.ai/robots',
  },
  {
    name: 'Diffbot',
    provider: 'Diffbot',
    category: 'ai_crawler',
    ua: /\bDiffbot\b/i,
    verify: NONE,
    source: 'https://docs.diffbot.com/docs/why-is-diffbot-crawling-my-site',
  },

  // --- Link previews
  {
    name: 'facebookexternalhit',
    provider: 'Meta',
    category: 'social_preview',
    ua: /\bfacebookexternalhit\b|\bfacebookcatalog\b/i,
    verify: ranges('meta'),
    source: META_DOC,
  },
  {
    name: 'Twitterbot',
    provider: 'X',
    category: 'social_preview',
    ua: /\bTwitterbot\b/i,
    verify: ranges('twitterbot'),
    source: 'https://developer.x.com/en/docs/x-for-websites/cards/guides/troubleshooting-cards',
  },
  {
    name: 'LinkedInBot',
    provider: 'LinkedIn',
    category: 'social_preview',
    ua: /\bLinkedInBot\b/i,
    verify: NONE,
    source: 'https://www.linkedin.com/robots.txt',
  },
  {
    name: 'Slackbot',
    provider: 'Slack',
    category: 'social_preview',
    ua: /\bSlackbot(?:-LinkExpanding)?\b/i,
    verify: NONE,
    source: 'https://api.slack.com/robots',
  },
  { name: 'Discordbot', provider: 'Discord', category: 'social_preview', ua: /\bDiscordbot\b/i, verify: NONE, source: 'https://discord.com/' },
  {
    name: 'TelegramBot',
    provider: 'Telegram',
    category: 'social_preview',
    ua: /\bTelegramBot\b/i,
    verify: NONE,
    source: 'https://core.telegram.org/bots/webapps',
  },
  { name: 'WhatsApp', provider: 'Meta', category: 'social_preview', ua: /^WhatsApp\/\d/i, verify: NONE, source: 'https://faq.whatsapp.com/' },
  {
    name: 'Pinterestbot',
    provider: 'Pinterest',
    category: 'social_preview',
    ua: /\bPinterest(?:bot)?\/\d/i,
    verify: rdns('pinterest.com', 'pinterestcrawler.com'),
    source: 'https://help.pinterest.com/en/business/article/pinterest-crawler',
  },

  // --- SEO and marketing
  {
    name: 'AhrefsSiteAudit',
    provider: 'Ahrefs',
    category: 'seo_marketing',
    ua: /\bAhrefsSiteAudit\b/i,
    verify: ranges('ahrefsbot'),
    source: 'https://ahrefs.com/robot/site-audit',
  },
  { name: 'AhrefsBot', provider: 'Ahrefs', category: 'seo_marketing', ua: /\bAhrefsBot\b/i, verify: ranges('ahrefsbot'), source: 'https://ahrefs.com/robot' },
  {
    name: 'SemrushBot',
    provider: 'Semrush',
    category: 'seo_marketing',
    ua: /\bSemrushBot\b|\bSiteAuditBot\b/i,
    verify: NONE,
    source: 'https://www.semrush.com/bot/',
  },
  { name: 'MJ12bot', provider: 'Majestic', category: 'seo_marketing', ua: /\bMJ12bot\b/i, verify: NONE, source: 'https://mj12bot.com/' },
  {
    name: 'DotBot',
    provider: 'Moz',
    category: 'seo_marketing',
    ua: /\bDotBot\b/i,
    verify: NONE,
    source: 'https://moz.com/help/moz-procedures/crawlers/dotbot',
  },
  {
    name: 'rogerbot',
    provider: 'Moz',
    category: 'seo_marketing',
    ua: /\brogerbot\b/i,
    verify: NONE,
    source: 'https://moz.com/help/moz-procedures/crawlers/rogerbot',
  },
  {
    name: 'DataForSeoBot',
    provider: 'DataForSEO',
    category: 'seo_marketing',
    ua: /\bDataForSeoBot\b/i,
    verify: rdns('dataforseo.com'),
    source: 'https://dataforseo.com/dataforseo-bot',
  },
  { name: 'BLEXBot', provider: 'WebMeUp', category: 'seo_marketing', ua: /\bBLEXBot\b/i, verify: rdns('webmeup.com'), source: 'http://webmeup-crawler.com/' },
  {
    name: 'Screaming Frog SEO Spider',
    provider: 'Screaming Frog',
    category: 'seo_marketing',
    ua: /\bScreaming Frog SEO Spider\b/i,
    verify: NONE,
    source: 'https://www.screamingfrog.co.uk/seo-spider/',
  },

  // --- Monitoring
  {
    name: 'UptimeRobot',
    provider: 'UptimeRobot',
    category: 'monitoring',
    ua: /\bUptimeRobot\b/i,
    verify: ranges('uptimerobot'),
    source: 'https://uptimerobot.com/help/locations/',
  },
  {
    name: 'Pingdom',
    provider: 'SolarWinds',
    category: 'monitoring',
    ua: /\bPingdom(?:\.com_bot|PageSpeed|TMS)/i,
    verify: ranges('pingdom'),
    source: 'https://documentation.solarwinds.com/en/success_center/pingdom/content/topics/pingdom-probe-servers-ip-addresses.htm',
  },
  {
    name: 'Site24x7',
    provider: 'Zoho',
    category: 'monitoring',
    ua: /\bSite24x7\b/i,
    verify: NONE,
    source: 'https://www.site24x7.com/multi-location-web-site-monitoring.html',
  },
  {
    name: 'Better Uptime Bot',
    provider: 'Better Stack',
    category: 'monitoring',
    ua: /\bBetter Uptime Bot\b|\bBetterstack\b/i,
    verify: NONE,
    source: 'https://betterstack.com/docs/uptime/frequently-asked-questions/',
  },
  {
    name: 'StatusCake',
    provider: 'StatusCake',
    category: 'monitoring',
    ua: /\bStatusCake\b/i,
    verify: NONE,
    source: 'https://www.statuscake.com/kb/knowledge-base/what-are-your-ips/',
  },
  {
    name: 'Chrome-Lighthouse',
    provider: 'Google',
    category: 'monitoring',
    ua: /\bChrome-Lighthouse\b/i,
    verify: NONE,
    source: 'https://developer.chrome.com/docs/lighthouse',
  },

  // --- Feed readers and archivers
  { name: 'Feedbin', provider: 'Feedbin', category: 'feed_reader', ua: /\bFeedbin\b/i, verify: NONE, source: 'https://feedbin.com/' },
  { name: 'Inoreader', provider: 'Inoreader', category: 'feed_reader', ua: /\bInoreader\b/i, verify: NONE, source: 'https://www.inoreader.com/' },
  { name: 'NewsBlur', provider: 'NewsBlur', category: 'feed_reader', ua: /\bNewsBlur\b/i, verify: NONE, source: 'https://www.newsblur.com/' },
  { name: 'Tiny Tiny RSS', provider: 'Tiny Tiny RSS', category: 'feed_reader', ua: /\bTiny Tiny RSS\b/i, verify: NONE, source: 'https://tt-rss.org/' },
  { name: 'FreshRSS', provider: 'FreshRSS', category: 'feed_reader', ua: /\bFreshRSS\b/i, verify: NONE, source: 'https://freshrss.org/' },
  {
    name: 'archive.org_bot',
    provider: 'Internet Archive',
    category: 'archiver',
    ua: /\barchive\.org_bot\b/i,
    verify: NONE,
    source: 'https://archive.org/details/archive.org_bot',
  },
  {
    name: 'ia_archiver',
    provider: 'Internet Archive',
    category: 'archiver',
    ua: /\bia_archiver\b/i,
    verify: NONE,
    source: 'https://archive.org/details/archive.org_bot',
  },

  // --- Browser automation (a real engine driven by a program)
  {
    name: 'HeadlessChrome',
    provider: 'Google',
    category: 'browser_automation',
    ua: /\bHeadlessChrome\b/,
    verify: NONE,
    source: 'https://developer.chrome.com/docs/chromium/headless',
  },
  { name: 'PhantomJS', provider: 'PhantomJS', category: 'browser_automation', ua: /\bPhantomJS\b/, verify: NONE, source: 'https://phantomjs.org/' },

  // --- HTTP libraries and tools: a bot, never "spoofed": nobody verifies curl.
  { name: 'curl', provider: 'curl', category: 'scraper', ua: /^curl\//i, verify: NONE, source: 'https://curl.se/' },
  { name: 'Wget', provider: 'GNU', category: 'scraper', ua: /^Wget\//i, verify: NONE, source: 'https://www.gnu.org/software/wget/' },
  { name: 'python-requests', provider: 'Python', category: 'scraper', ua: /^python-requests\//i, verify: NONE, source: HTTP_LIBRARY },
  { name: 'python-urllib', provider: 'Python', category: 'scraper', ua: /^Python-urllib\//i, verify: NONE, source: HTTP_LIBRARY },
  { name: 'python-httpx', provider: 'Python', category: 'scraper', ua: /^python-httpx\//i, verify: NONE, source: HTTP_LIBRARY },
  { name: 'aiohttp', provider: 'Python', category: 'scraper', ua: /\baiohttp\//i, verify: NONE, source: HTTP_LIBRARY },
  { name: 'Scrapy', provider: 'Scrapy', category: 'scraper', ua: /\bScrapy\//i, verify: NONE, source: 'https://scrapy.org/' },
  { name: 'Go-http-client', provider: 'Go', category: 'scraper', ua: /^Go-http-client\//i, verify: NONE, source: HTTP_LIBRARY },
  { name: 'axios', provider: 'axios', category: 'scraper', ua: /^axios\//i, verify: NONE, source: HTTP_LIBRARY },
  { name: 'node-fetch', provider: 'node-fetch', category: 'scraper', ua: /^node-fetch\b/i, verify: NONE, source: HTTP_LIBRARY },
  { name: 'undici', provider: 'Node.js', category: 'scraper', ua: /^(?:undici|node)$/i, verify: NONE, source: HTTP_LIBRARY },
  { name: 'okhttp', provider: 'Square', category: 'scraper', ua: /^okhttp\//i, verify: NONE, source: HTTP_LIBRARY },
  { name: 'Apache-HttpClient', provider: 'Apache', category: 'scraper', ua: /^Apache-HttpClient\//i, verify: NONE, source: HTTP_LIBRARY },
  { name: 'Java', provider: 'Java', category: 'scraper', ua: /^Java\/\d/i, verify: NONE, source: HTTP_LIBRARY },
  { name: 'libwww-perl', provider: 'Perl', category: 'scraper', ua: /^libwww-perl\//i, verify: NONE, source: HTTP_LIBRARY },
  { name: 'Guzzle', provider: 'PHP', category: 'scraper', ua: /^GuzzleHttp\//i, verify: NONE, source: HTTP_LIBRARY },
  { name: 'Ruby', provider: 'Ruby', category: 'scraper', ua: /^Ruby$|^Faraday v\d/i, verify: NONE, source: HTTP_LIBRARY },
  { name: 'PostmanRuntime', provider: 'Postman', category: 'scraper', ua: /^PostmanRuntime\//i, verify: NONE, source: HTTP_LIBRARY },
  { name: 'HTTPie', provider: 'HTTPie', category: 'scraper', ua: /^HTTPie\//i, verify: NONE, source: HTTP_LIBRARY },
];

/** The catalog entry whose User-Agent pattern the UA matches first, or null. */
export function catalogEntryFor(userAgent: string): BotEntry | null {
  for (const entry of BOT_CATALOG) if (entry.ua.test(userAgent)) return entry;
  return null;
}

/** Every list id the catalog verifies by: each has a shipped server/bots/data/<id>.json. */
export const BOT_LISTS: readonly string[] = [...new Set(BOT_CATALOG.flatMap((e) => (e.verify.method === 'ranges' ? [e.verify.list] : [])))];
