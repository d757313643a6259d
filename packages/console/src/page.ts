// The page's fixed elements and its two live regions: one for progress, one for errors.
import { describeFailure } from './failure.js';

/** The element of `id` in index.html (which has every element the scripts look up). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`index.html has no element #${id}`);
  return found as T;
}

/** Progress and outcomes, read out politely by screen readers. */
export function announce(message: string): void {
  byId('status').textContent = message;
}

/** An error, read out at once; it stays until the next action. */
export function showError(message: string): void {
  announce('');
  byId('alert').textContent = message;
}

export function clearMessages(): void {
  announce('');
  byId('alert').textContent = '';
}

/** Runs one request-backed action with its progress announced and its failure shown. */
export async function busy(region: HTMLElement, progress: string, action: () => Promise<string>): Promise<void> {
  clearMessages();
  announce(progress);
  region.setAttribute('aria-busy', 'true');
  try {
    announce(await action());
  } catch (error) {
    showError(describeFailure(error));
  } finally {
    region.removeAttribute('aria-busy');
  }
}
