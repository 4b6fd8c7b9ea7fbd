/** Renders completion choices as they arrive (text or logprob-annotated tokens), usage and errors. */
import type { ApiError } from './api.js';
import { el } from './dom.js';
import { formatInt } from './format.js';

export interface CompletionLogprobs {
  tokens?: string[];
  token_logprobs?: (number | null)[];
  top_logprobs?: (Record<string, number> | null)[] | null;
  text_offset?: number[];
}

export interface CompletionChoice {
  index: number;
  text: string;
  logprobs: CompletionLogprobs | null;
  finish_reason: string | null;
}

export interface CompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

interface ChoicePanel {
  text: HTMLElement;
  finish: HTMLElement;
}

const percent = (logprob: number) => `${(Math.exp(logprob) * 100).toFixed(logprob > -4.6 ? 1 : 3)}%`;

/** One token with its logprob and the top alternatives in its title; greener means more likely. */
function tokenSpan(token: string, logprob: number | null | undefined, top: Record<string, number> | null | undefined): HTMLElement {
  const span = el('span', { class: 'token' }, token);
  const lines = [
    `${JSON.stringify(token)}  ${logprob === null || logprob === undefined ? 'no logprob (first prompt token)' : `logprob ${logprob.toFixed(4)} (p ${percent(logprob)})`}`,
  ];
  if (top && Object.keys(top).length > 0) {
    lines.push('Top alternatives:');
    for (const [alternative, value] of Object.entries(top).sort((a, b) => b[1] - a[1]))
      lines.push(`  ${JSON.stringify(alternative)}  ${value.toFixed(4)} (p ${percent(value)})`);
  }
  span.title = lines.join('\n');
  if (typeof logprob === 'number') {
    span.dataset.logprob = String(logprob);
    // An underline from red (unlikely) through amber to green (likely): readable text, visible shape.
    span.style.setProperty('--token-tone', `hsl(${Math.round(120 * Math.exp(logprob))} 75% 48%)`);
  }
  return span;
}

function logprobLegend(): HTMLElement {
  const swatch = (hue: number) => {
    const mark = el('i');
    mark.style.background = `hsl(${hue} 75% 48%)`;
    return mark;
  };
  return el(
    'div',
    { class: 'legend' },
    el('span', null, swatch(120), 'likely'),
    el('span', null, swatch(40), 'less likely'),
    el('span', null, swatch(0), 'unlikely'),
    el('span', null, 'Hover a token for its logprob and the top alternatives.'),
  );
}

export class CompletionView {
  private readonly panels = new Map<number, ChoicePanel>();
  /** Text events rendered so far, across choices. */
  chunks = 0;

  constructor(
    private readonly choices: HTMLElement,
    private readonly usage: HTMLElement,
    private readonly error: HTMLElement,
  ) {}

  reset(): void {
    this.panels.clear();
    this.chunks = 0;
    this.choices.replaceChildren();
    this.usage.replaceChildren();
    this.usage.hidden = true;
    this.error.replaceChildren();
    this.error.hidden = true;
  }

  private panel(index: number): ChoicePanel {
    let panel = this.panels.get(index);
    if (!panel) {
      const text = el('div', { class: 'text', 'data-choice': String(index) });
      const finish = el('span', { class: 'finish' }, 'streaming…');
      const card = el('article', { class: 'choice', id: `choice-${index}` }, el('header', null, el('span', null, `Choice ${index}`), finish), text);
      // Keep choices in index order even when they interleave.
      const next = [...this.panels.entries()].filter(([other]) => other > index).sort((a, b) => a[0] - b[0])[0];
      this.choices.insertBefore(card, next ? next[1].text.parentElement : null);
      panel = { text, finish };
      this.panels.set(index, panel);
    }
    return panel;
  }

  /** Adds one choice delta (a stream chunk) or a whole choice (a plain response). */
  addChoice(choice: CompletionChoice): void {
    const panel = this.panel(choice.index);
    const tokens = choice.logprobs?.tokens;
    if (tokens && tokens.length > 0) {
      if (!this.choices.querySelector('.legend')) this.choices.prepend(logprobLegend());
      const fragment = document.createDocumentFragment();
      tokens.forEach((token, position) => {
        fragment.append(tokenSpan(token, choice.logprobs?.token_logprobs?.[position], choice.logprobs?.top_logprobs?.[position]));
      });
      panel.text.append(fragment);
    } else if (choice.text) {
      panel.text.append(document.createTextNode(choice.text));
    }
    if (choice.text || tokens?.length) this.chunks++;
    if (choice.finish_reason) panel.finish.textContent = `finish_reason: ${choice.finish_reason}`;
  }

  finishOpenChoices(label: string): void {
    for (const panel of this.panels.values()) if (panel.finish.textContent === 'streaming…') panel.finish.textContent = label;
  }

  showUsage(usage: CompletionUsage | null, timing: string): void {
    const item = (label: string, value: number | undefined) => el('span', null, `${label} `, el('b', null, formatInt(value)));
    this.usage.replaceChildren(
      ...(usage
        ? [
            item('prompt', usage.prompt_tokens),
            item('completion', usage.completion_tokens),
            item('total', usage.total_tokens),
            item('cached', usage.prompt_tokens_details?.cached_tokens ?? 0),
            item('reasoning', usage.completion_tokens_details?.reasoning_tokens ?? 0),
          ]
        : [el('span', { class: 'muted' }, 'No usage reported (turn on include_usage to get it on a stream).')]),
      el('span', { class: 'muted' }, timing),
    );
    this.usage.dataset.total = usage ? String(usage.total_tokens) : '';
    this.usage.hidden = false;
  }

  showError(error: ApiError | { message: string; param: string | null; type?: string | null; code?: string | null; status?: number }, context: string): void {
    const meta = [
      error.status ? `HTTP ${error.status}` : null,
      error.type ? `type: ${error.type}` : null,
      `param: ${error.param ?? 'none'}`,
      error.code ? `code: ${error.code}` : null,
    ]
      .filter(Boolean)
      .join(' · ');
    this.error.replaceChildren(el('div', { class: 'message' }, error.message), el('div', { class: 'meta' }, meta));
    if (context) this.error.append(el('div', { class: 'meta' }, context));
    this.error.dataset.param = error.param ?? '';
    this.error.hidden = false;
  }
}
