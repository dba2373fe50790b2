// Projects: the list with each one's allowed domains, editing one in place
// (name, domains, the linkedId setting), and creating one. The API names a bad domain by its index; the message
// adds the value itself.
import { api, errorText, type Answer } from '../browser/client.js';
import { button, el, labelCells, node, text } from '../browser/dom.js';
import { report, type Project, type Projects } from './types.js';

const parseDomains = (raw: string) => raw.split(/[\s,]+/).filter(Boolean);

function domainError(res: Answer, domains: string[]): string {
  const message = errorText(res);
  const m = /^allowedDomains\.(\d+):/.exec(message);
  const bad = m ? domains[Number(m[1])] : undefined;
  return bad === undefined ? message : `${message} (“${bad}”)`;
}

/** `canEdit`: the role may create and edit projects (admin); others see the list only. */
export function projectsPanel(projects: Projects, canEdit: boolean): void {
  el('project-form').hidden = !canEdit;
  let editing: Project | null = null;

  const render = () => {
    const body = el<HTMLTableSectionElement>('projects-body');
    body.replaceChildren(
      ...projects.list().map((p) => {
        const tr = node('tr');
        const domains = p.allowedDomains.length ? node('td', p.allowedDomains.join(', '), 'text') : node('td', 'any host', 'muted');
        const actions = node('td');
        if (canEdit) actions.append(button('Edit', 'link', () => startEdit(p), `Edit ${p.name}`));
        tr.append(node('td', p.name, 'text'), domains, actions);
        return tr;
      }),
    );
    labelCells(body);
  };

  const startEdit = (p: Project) => {
    editing = p;
    text('edit-title', p.name);
    el<HTMLInputElement>('edit-name').value = p.name;
    el<HTMLTextAreaElement>('edit-domains').value = p.allowedDomains.join('\n');
    el<HTMLInputElement>('edit-linked').checked = p.linkedIdEvidence;
    report('edit-error', null);
    el('edit-form').hidden = false;
    el('edit-name').focus();
  };

  const stopEdit = () => {
    editing = null;
    el('edit-form').hidden = true;
  };

  el('edit-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      if (!editing) return;
      const domains = parseDomains(el<HTMLTextAreaElement>('edit-domains').value);
      const res = await api.account.updateProject({
        params: { projectId: editing.id },
        body: { name: el<HTMLInputElement>('edit-name').value, allowedDomains: domains, linkedIdEvidence: el<HTMLInputElement>('edit-linked').checked },
      });
      if (res.status !== 200) return report('edit-error', res.status === 401 ? res : domainError(res, domains));
      stopEdit();
      projects.put(res.body);
    })();
  });
  el('edit-cancel').addEventListener('click', stopEdit);

  el('project-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      const name = el<HTMLInputElement>('project-name');
      const domainsField = el<HTMLTextAreaElement>('project-domains');
      const domains = parseDomains(domainsField.value);
      report('project-error', null);
      const res = await api.account.createProject({ body: { name: name.value, allowedDomains: domains } });
      if (res.status !== 201) return report('project-error', res.status === 401 ? res : domainError(res, domains));
      name.value = '';
      domainsField.value = '';
      projects.put(res.body);
    })();
  });

  projects.onList(render);
  render();
}
