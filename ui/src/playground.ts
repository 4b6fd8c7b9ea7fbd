/** The playground: every completions parameter, streamed output, logprobs, usage and errors. */
import './styles.css';
import { ApiError, clearSession, errorFromResponse, getJson, loadSession, type Session } from './api.js';
import { buildCompletionBody, FormError } from './completion-request.js';
import { CompletionView, type CompletionChoice, type CompletionUsage } from './completion-view.js';
import { byId, el } from './dom.js';
import { formatMs } from './format.js';
import { renderSessionBadge, renderSignIn } from './session-header.js';
import { readSse } from './sse-reader.js';

interface ModelEntry {
  id: string;
  owned_by: string;
  capabilities?: { logprobs: boolean };
  targets?: string[];
}

interface CompletionChunk {
  choices?: CompletionChoice[];
  usage?: CompletionUsage | null;
  error?: { message: string; type: string | null; param: string | null; code: string | null };
}

async function fillModels(select: HTMLSelectElement, session: Session): Promise<void> {
  const models = (await getJson<{ data: ModelEntry[] }>('/v5/models', session.key)).data;
  const groups = new Map<string, ModelEntry[]>();
  for (const model of models) groups.set(model.owned_by, [...(groups.get(model.owned_by) ?? []), model]);
  select.replaceChildren(
    ...[...groups.entries()].map(([owner, entries]) =>
      el(
        'optgroup',
        { label: owner === 'alias' ? 'Aliases' : owner },
        ...entries.map((model) => el('option', { value: model.id, title: model.targets ? `→ ${model.targets.join(', ')}` : undefined }, model.id)),
      ),
    ),
  );
}

function renderPlayground(app: HTMLElement, session: Session): void {
  const template = byId<HTMLTemplateElement>('playground-template');
  app.replaceChildren(template.content.cloneNode(true));
  const form = byId<HTMLFormElement>('completion-form');
  const send = byId<HTMLButtonElement>('send');
  const stop = byId<HTMLButtonElement>('stop-request');
  const status = byId('run-status');
  const preview = byId('request-preview');
  const stream = byId<HTMLInputElement>('stream');
  const includeUsage = byId<HTMLInputElement>('include_usage');
  const view = new CompletionView(byId('choices'), byId('usage'), byId('completion-error'));
  let controller: AbortController | null = null;

  const updatePreview = () => {
    includeUsage.disabled = !stream.checked;
    try {
      preview.textContent = JSON.stringify(buildCompletionBody(form), null, 2);
    } catch (error) {
      preview.textContent = (error as Error).message;
    }
  };
  form.addEventListener('input', updatePreview);
  form.addEventListener('change', updatePreview);
  void fillModels(byId<HTMLSelectElement>('model'), session).then(updatePreview, (error: unknown) => {
    view.showError(error instanceof ApiError ? error : { message: String(error), param: null }, 'Loading models from /v5/models failed.');
  });
  stop.addEventListener('click', () => controller?.abort());

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    view.reset();
    let body: Record<string, unknown>;
    try {
      body = buildCompletionBody(form);
    } catch (error) {
      if (error instanceof FormError) return view.showError({ message: error.message, param: error.param }, 'Checked in the browser; nothing was sent.');
      throw error;
    }
    controller = new AbortController();
    send.disabled = true;
    stop.disabled = false;
    const started = performance.now();
    let firstChunkMs: number | null = null;
    let pings = 0;
    const timing = () =>
      [
        firstChunkMs === null ? null : `first text ${formatMs(firstChunkMs)}`,
        `elapsed ${formatMs(performance.now() - started)}`,
        body.stream ? `${view.chunks} chunks` : null,
        pings ? `${pings} keep-alive pings` : null,
      ]
        .filter(Boolean)
        .join(' · ');
    status.textContent = 'Sending…';
    form.dataset.state = 'running';
    try {
      const response = await fetch('/v5/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': session.key },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      if (!response.ok) {
        const error = await errorFromResponse(response);
        if (error.status === 401) clearSession();
        view.showError(error, 'The gateway refused the request before any output.');
        status.textContent = timing();
        return;
      }
      if (!body.stream) {
        const completion = (await response.json()) as CompletionChunk;
        firstChunkMs = performance.now() - started;
        for (const choice of completion.choices ?? []) view.addChoice(choice);
        view.showUsage(completion.usage ?? null, timing());
        status.textContent = `Done. ${timing()}`;
        return;
      }
      let usage: CompletionUsage | null = null;
      let ended = false;
      if (!response.body) throw new Error('The gateway answered the stream with no body.');
      for await (const item of readSse(response.body)) {
        if (item.kind === 'comment') {
          if (item.text === 'ping') pings++;
          status.textContent = `Streaming… ${timing()}`;
          continue;
        }
        if (item.event === 'done' || item.data === '[DONE]') {
          ended = true;
          break;
        }
        const chunk = JSON.parse(item.data) as CompletionChunk;
        if (chunk.error) {
          view.showError(chunk.error, `The stream failed after ${view.chunks} chunks (an error event, not a truncation).`);
          ended = true;
          break;
        }
        for (const choice of chunk.choices ?? []) {
          if (firstChunkMs === null && choice.text) firstChunkMs = performance.now() - started;
          view.addChoice(choice);
        }
        if (chunk.usage) usage = chunk.usage;
        status.textContent = `Streaming… ${timing()}`;
      }
      view.finishOpenChoices(ended ? 'ended' : 'cut off');
      if (!ended) view.showError({ message: 'The stream ended without [DONE].', param: null }, 'The connection closed early.');
      view.showUsage(usage, timing());
      status.textContent = `Done. ${timing()}`;
    } catch (error) {
      if ((error as Error).name === 'AbortError') {
        view.finishOpenChoices('stopped');
        status.textContent = `Stopped. ${timing()}`;
      } else {
        view.showError({ message: (error as Error).message, param: null }, 'The request did not complete.');
        status.textContent = '';
      }
    } finally {
      send.disabled = false;
      stop.disabled = true;
      controller = null;
      form.dataset.state = 'done';
    }
  });
}

async function main(): Promise<void> {
  const app = byId('app');
  const slot = byId('session');
  let session = loadSession();
  if (!session) session = await renderSignIn(app, 'The playground sends completions with your API key.');
  renderSessionBadge(slot, session);
  if (session.role === 'admin') {
    app.replaceChildren(
      el(
        'section',
        { class: 'card sign-in', id: 'admin-notice' },
        el('h2', null, 'The playground needs an API key'),
        el('p', null, 'You are signed in with the admin key, which can read every account but cannot send completions. Sign out and sign in with an API key.'),
      ),
    );
    return;
  }
  renderPlayground(app, session);
}

void main();
