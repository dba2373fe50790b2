// Sealed results of the chosen project: turn on or rotate the key (shown
// once), turn off.
import { api } from '../browser/client.js';
import { el, reveal, text } from '../browser/dom.js';
import { report, utcSeconds as when, type Projects } from './types.js';

export function sealingPanel(projects: Projects): { show(): Promise<void> } {
  const sealing = api.sealing;
  let projectId = '';

  const render = (state: { enabled: boolean; since: string | null }) => {
    text(
      'sealing-state',
      state.enabled
        ? `On since ${when(state.since)}: identify answers {sealedResult}; open it on your backend with unseal(blob, key).`
        : 'Off: identify answers the plain compact result.',
    );
    el('sealing-key').textContent = state.enabled ? 'Rotate key' : 'Turn on';
    el('sealing-off').hidden = !state.enabled;
  };

  el('sealing-key').addEventListener('click', () => {
    void (async () => {
      report('sealing-error', null);
      const res = await sealing.createSealingKey({ params: { projectId }, body: {} });
      if (res.status !== 201) return report('sealing-error', res);
      render(res.body);
      reveal(el('sealing-secret'), 'Sealing key (AES-256, base64)', res.body.key);
    })();
  });
  el('sealing-off').addEventListener('click', () => {
    void (async () => {
      report('sealing-error', null);
      const res = await sealing.disableSealing({ params: { projectId } });
      if (res.status !== 200) return report('sealing-error', res);
      el('sealing-secret').replaceChildren();
      render(res.body);
    })();
  });

  return {
    /** Shows the chosen project's state; called again when another is chosen. */
    async show() {
      projectId = projects.current()?.id ?? '';
      el('sealing-secret').replaceChildren();
      report('sealing-error', null);
      if (!projectId) return;
      text('sealing-state', 'Loading…');
      const res = await sealing.getSealing({ params: { projectId } });
      if (res.status !== 200) {
        text('sealing-state', '');
        return report('sealing-error', res);
      }
      render(res.body);
    },
  };
}
