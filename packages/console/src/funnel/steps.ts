// The funnel's steps: one event picker per step, 2 to 10 of them, added and removed in place,
// each named by its position for screen readers.
import type { EventTypeSummary } from '@svc/client';
import { fillPicker } from '../events.js';
import { byId } from '../page.js';
import { selectedText } from '../view.js';

const MIN_STEPS = 2;
const MAX_STEPS = 10;

export interface Steps {
  /** New event types to pick from; the steps are filled again, keeping their choices. */
  fill(events: readonly EventTypeSummary[]): void;
  /** The event type of each step, and its display name. */
  chosen(): { value: string; name: string }[];
  clear(): void;
}

export function funnelSteps(): Steps {
  const list = byId<HTMLOListElement>('funnel-steps');
  const add = byId<HTMLButtonElement>('funnel-add-step');
  const template = byId<HTMLTemplateElement>('funnel-step');
  let events: readonly EventTypeSummary[] = [];
  const pickers = () => [...list.querySelectorAll('select')];

  function renumber(): void {
    const items = [...list.children] as HTMLLIElement[];
    items.forEach((item, index) => {
      item.querySelector('.step-name')!.textContent = `Step ${index + 1}`;
      const remove = item.querySelector('button')!;
      remove.setAttribute('aria-label', `Remove step ${index + 1}`);
      remove.disabled = items.length <= MIN_STEPS;
    });
    add.disabled = items.length >= MAX_STEPS;
  }

  function addStep(): HTMLSelectElement {
    const item = (template.content.firstElementChild as HTMLLIElement).cloneNode(true) as HTMLLIElement;
    const picker = item.querySelector('select')!;
    // A new step proposes the event type after the previous step's, as funnels go forward.
    fillPicker(picker, events, events[list.children.length]?.value);
    item.querySelector('button')!.addEventListener('click', () => {
      const next = item.nextElementSibling?.querySelector('select') ?? add;
      item.remove();
      renumber();
      next.focus();
    });
    list.append(item);
    renumber();
    return picker;
  }

  add.addEventListener('click', () => addStep().focus());

  return {
    fill(newEvents) {
      events = newEvents;
      for (const picker of pickers()) fillPicker(picker, events);
      while (list.children.length < MIN_STEPS) addStep();
    },
    chosen: () => pickers().map((picker) => ({ value: picker.value, name: selectedText(picker) })),
    clear() {
      list.replaceChildren();
      events = [];
    },
  };
}
