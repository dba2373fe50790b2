// Small DOM helpers of the page scripts. Everything from the server is set
// as text (textContent, input values), never parsed as HTML.
import { errorText, type Answer } from './client.js';

export function el<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`#${id} missing`);
  return found as T;
}

/** Sets text only: never HTML. */
export function text(id: string, value: string): void {
  el(id).textContent = value;
}

/** Shows exactly one of the sections. */
export function showOnly(ids: readonly string[], visible: string): void {
  for (const id of ids) el(id).hidden = id !== visible;
}

/** Shows a failed answer's error text in the alert `id` beside the control that made the call; null hides it. */
export function problem(id: string, res: Answer | string | null): void {
  const p = el(id);
  p.hidden = res === null;
  p.textContent = res === null ? '' : typeof res === 'string' ? res : errorText(res);
}

export function node<K extends keyof HTMLElementTagNameMap>(tag: K, content = '', className = ''): HTMLElementTagNameMap[K] {
  const n = document.createElement(tag);
  if (content) n.textContent = content;
  if (className) n.className = className;
  return n;
}

export function button(label: string, className: string, onClick: (e: MouseEvent) => void, ariaLabel?: string): HTMLButtonElement {
  const b = node('button', label, className);
  b.type = 'button';
  if (ariaLabel) b.setAttribute('aria-label', ariaLabel);
  b.addEventListener('click', onClick);
  return b;
}

/** Each cell gets its column's name, which narrow screens show in front of it (pages.css). */
export function labelCells(body: HTMLTableSectionElement): void {
  const names = Array.from(body.closest('table')?.querySelectorAll('thead th') ?? [], (th) => th.textContent ?? '');
  for (const tr of Array.from(body.rows)) {
    Array.from(tr.cells).forEach((td, i) => {
      if (names[i] && !td.querySelector('.sr-only')) td.dataset.label = names[i]!;
    });
  }
}

/** Copies a field's value: the clipboard API, else the selection (insecure context, old browser, no permission). */
export async function copy(field: HTMLInputElement | HTMLTextAreaElement): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(field.value);
    return true;
  } catch {
    field.focus();
    field.select();
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    }
  }
}

export const COPY_BY_HAND = 'Press Ctrl+C (⌘C on a Mac) to copy the selected text.';

/**
 * A secret shown once in `container`, with Copy and Dismiss (which empties
 * the container and calls `dismissed`). `ids` name the field and the copy status.
 */
export function reveal(
  container: HTMLElement,
  title: string,
  value: string,
  options: { fieldId?: string; statusId?: string; dismissed?: () => void } = {},
): void {
  const box = node('section', '', 'reveal');
  const heading = node('h3', title);
  heading.id = `${container.id}-title`;
  box.setAttribute('aria-labelledby', heading.id);
  const label = node('label', 'Value');
  const field = node('input', '', 'mono');
  if (options.fieldId) field.id = options.fieldId;
  field.type = 'text';
  field.readOnly = true;
  field.spellcheck = false;
  field.value = value;
  label.append(field);
  const status = node('span', '', 'ok');
  status.setAttribute('role', 'status');
  if (options.statusId) status.id = options.statusId;
  const copyButton = button('Copy', 'btn small accent', () => {
    void copy(field).then((ok) => (status.textContent = ok ? 'Copied' : COPY_BY_HAND));
  });
  const dismiss = button('Dismiss', 'btn small secondary', () => {
    container.replaceChildren();
    options.dismissed?.();
  });
  const row = node('div', '', 'row');
  row.append(copyButton, ' ', dismiss, ' ', status);
  box.append(heading, node('p', "Copy it now — you won't see it again.", 'warning'), label, row);
  container.replaceChildren(box);
  field.focus();
  field.select();
}
