/**
 * Turns the playground form into a /v5/completions body. Empty fields are left out; every value
 * the user typed is sent as typed (no clamping), so the gateway's own validation answers.
 */
export class FormError extends Error {
  constructor(
    message: string,
    readonly param: string,
  ) {
    super(message);
  }
}

const numberFields = ['max_tokens', 'temperature', 'top_p', 'n', 'best_of', 'presence_penalty', 'frequency_penalty', 'logprobs', 'seed'] as const;

function input(form: HTMLFormElement, id: string): HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement {
  const element = form.querySelector<HTMLInputElement>(`#${id}`);
  if (!element) throw new Error(`missing #${id}`);
  return element;
}

/** `\n`, `\t` and `\\` in a stop field mean a newline, a tab and a backslash. */
export function unescapeStop(text: string): string {
  return text.replace(/\\([nt\\])/g, (_match, char: string) => (char === 'n' ? '\n' : char === 't' ? '\t' : '\\'));
}

export function buildCompletionBody(form: HTMLFormElement): Record<string, unknown> {
  const value = (id: string) => input(form, id).value;
  const checked = (id: string) => (input(form, id) as HTMLInputElement).checked;
  const body: Record<string, unknown> = { model: value('model') };

  const prompt = value('prompt');
  body.prompt = checked('prompt_list') ? prompt.split('\n').filter((line) => line.length > 0) : prompt;

  for (const field of numberFields) {
    const raw = value(field).trim();
    if (raw === '') continue;
    const parsed = Number(raw);
    if (Number.isNaN(parsed)) throw new FormError(`'${field}' must be a number.`, field);
    body[field] = parsed;
  }

  const stops = [0, 1, 2, 3]
    .map((index) => value(`stop_${index}`))
    .filter((stop) => stop !== '')
    .map(unescapeStop);
  if (stops.length === 1) body.stop = stops[0];
  else if (stops.length > 1) body.stop = stops;

  const logitBias = value('logit_bias').trim();
  if (logitBias !== '') {
    try {
      body.logit_bias = JSON.parse(logitBias);
    } catch {
      throw new FormError('\'logit_bias\' must be JSON, for example {"50256": -100}.', 'logit_bias');
    }
  }

  for (const field of ['suffix', 'user']) if (value(field) !== '') body[field] = value(field);
  if (checked('echo')) body.echo = true;
  if (checked('stream')) {
    body.stream = true;
    if (checked('include_usage')) body.stream_options = { include_usage: true };
  }
  return body;
}
