// Bot categories as people read them, for the explorer, the Overview and the
// filter form (used in the page's HTML and in its scripts alike: no DOM here).
import { BOT_CATEGORIES, type BotCategory } from '../../../contract/bots.js';

export { BOT_CATEGORIES, type BotCategory };

export const botCategoryLabel = (category: BotCategory) => category.replace(/_/g, ' ').replace(/^ai /, 'AI ').replace(/^seo /, 'SEO ');
