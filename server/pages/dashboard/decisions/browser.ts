// /assets/decisions.js: the Rules, Lists and Review pages of the dashboard,
// loaded by its script the first time one of them is shown (lazy.ts), which
// then builds them with what it shares.
import { listsView } from './lists.js';
import { reviewsView } from './reviews.js';
import { rulesView } from './rules.js';

window.deviceidDecisions = (shared) => ({ rules: rulesView(shared), lists: listsView(shared), reviews: reviewsView(shared) });
