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
