// Plan and usage: the plan, its limits, this month's identify calls against
// the quota (meter and daily chart), and switching plan where allowed.
import { api } from '../browser/client.js';
import { el, text } from '../browser/dom.js';
import { monthName, percent, usageChart } from './chart.js';
import { calls, fmt, report, type Account, type Usage } from './types.js';

const planLabel = (plan: string) => plan.charAt(0).toUpperCase() + plan.slice(1);

export function planPanel(initial: { account: Account; usage: Usage }): void {
  let { account, usage } = initial;

  const render = () => {
    text('plan-name', planLabel(account.plan));
    text('limit-rps', `${fmt(account.limits.rps)} per second`);
    text('limit-monthly', fmt(usage.limit));
    text('usage-count', `${fmt(usage.count)} of ${fmt(usage.limit)} (${monthName(usage.period)})`);
    text('usage-percent', `${percent(usage.count, usage.limit)} used`);
    const meter = el<HTMLMeterElement>('usage-meter');
    meter.max = Math.max(usage.limit, 1);
    meter.high = meter.max * 0.8;
    meter.value = usage.count;
    el<HTMLSelectElement>('plan-select').value = account.plan;
    el('plan-form').hidden = !account.canChangePlan;
    el('plan-assigned').hidden = account.canChangePlan;
    el('chart').replaceChildren(usageChart(usage));
    const { period, count, limit, testCount } = usage;
    text(
      'chart-caption',
      `Daily identify calls in ${monthName(period)} (UTC days). Live keys count against the monthly quota of ${fmt(limit)}: ${fmt(count)} used (${percent(count, limit)}). Test keys, shown apart, never count: ${calls(testCount)}.`,
    );
  };

  el('plan-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      const plan = el<HTMLSelectElement>('plan-select').value as Account['plan'];
      const submit = el<HTMLButtonElement>('plan-submit');
      report('plan-error', null);
      text('plan-status', '');
      submit.disabled = true;
      const res = await api.account.setPlan({ body: { plan } });
      submit.disabled = false;
      if (res.status !== 200) return report('plan-error', res);
      account = res.body;
      usage = { ...usage, limit: account.limits.monthly };
      render();
      text('plan-status', `Switched to ${planLabel(plan)}.`);
    })();
  });
  render();
}
