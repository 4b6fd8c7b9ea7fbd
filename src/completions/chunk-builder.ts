/**
 * Builds stream chunks as whole SSE events (`data: {…}\n\n`), the fixed fields serialised once,
 * so each chunk is built in one string instead of being copied again into its event: the opening
 * once per stream (it holds the stream's id), what follows the choices once per model, fingerprint
 * and usage setting for every stream that shares them.
 *
 * A text chunk is three pieces: the fixed opening, the text, and the closing for its choice index
 * (cached, flat); for a text that needs no escaping, the opening and the closing hold its quotes.
 * V8 joins strings lazily into trees ("cons strings") and copies the tree into one buffer when the
 * response is written; a template literal with a dozen pieces, whose fixed parts were themselves
 * trees, made that copy walk ~25 pieces a chunk (callgrind: ~40k instructions a 20-chunk stream,
 * in `Buffer.byteLength` of the response).
 *
 * `ascii` says whether the event just built is all ASCII, so the writer can send it as latin1:
 * the same bytes as UTF-8 for such text, without measuring and encoding it character by character.
 */
import type { FinishReason } from '../vendors/types.js';
import { flat } from '../vendors/shared/flat-string.js';
import { escaped, isAscii, plainAscii, textKind } from '../vendors/shared/json-string.js';
import { usageJson, type ChoiceLogprobs, type CompletionUsage } from './completion-objects.js';

/**
 * What every chunk of the streams of one model, fingerprint and usage setting has after its
 * choices, built once for all of them rather than once per stream (a JSON.stringify and three
 * flattened strings a stream).
 */
interface Ending {
  /** `],"model":…,"system_fingerprint":` */
  tail: string;
  fingerprintJson: string;
  /** The fingerprint, then the usage field when the client asked for usage: how every choice chunk ends. */
  end: string;
  /** The model and the fingerprint are ASCII. */
  ascii: boolean;
  /**
   * Per choice index, the rest of a text chunk after its text (no logprobs, not finished); at
   * `2 * index + 1` the same with the text's closing quote in front.
   */
  closings: string[];
}

/** Endings by model, then fingerprint (`null` for none: a Map key of its own, apart from every string), then [without usage, with usage]. */
const endings = new Map<string, Map<string | null, Ending[]>>();
/** Models (and fingerprints per model) kept; past this a cache starts over (a model name is the caller's text). */
const maxCached = 256;

function endingFor(model: string, fingerprint: string | null, includeUsage: boolean): Ending {
  let byFingerprint = endings.get(model);
  if (byFingerprint === undefined) {
    if (endings.size >= maxCached) endings.clear();
    byFingerprint = new Map();
    endings.set(model, byFingerprint);
  }
  let pair = byFingerprint.get(fingerprint);
  if (pair === undefined) {
    if (byFingerprint.size >= maxCached) byFingerprint.clear();
    pair = [];
    byFingerprint.set(fingerprint, pair);
  }
  const slot = includeUsage ? 1 : 0;
  let ending = pair[slot];
  if (ending === undefined) {
    const tail = flat(`],"model":${JSON.stringify(model)},"system_fingerprint":`);
    const fingerprintJson = fingerprint === null ? 'null' : JSON.stringify(fingerprint);
    const end = flat(`${fingerprintJson}${includeUsage ? ',"usage":null' : ''}}\n\n`);
    ending = { tail, fingerprintJson, end, ascii: isAscii(tail) && isAscii(fingerprintJson), closings: [] };
    pair[slot] = ending;
  }
  return ending;
}

export class ChunkBuilder {
  /** `data: {"id":…,"choices":[` */
  private readonly head: string;
  /** `{"text":` after the head: how a chunk whose text needs escaping or that ends a choice starts. */
  private readonly textHead: string;
  /** `{"text":"` after the head: the same with the text's opening quote, for a text that goes in as it is. */
  private readonly plainTextHead: string;
  private readonly model: string;
  private readonly includeUsage: boolean;
  private ending: Ending;
  /** The id is ASCII. */
  private readonly idAscii: boolean;
  /** The id, the model and the fingerprint are ASCII. */
  private fixedAscii: boolean;
  /** Whether the last event built is all ASCII. */
  ascii = false;

  constructor(id: string, created: number, model: string, includeUsage: boolean, fingerprint: string | null = null) {
    // Only the piece every text chunk starts with is made flat: the other two serve a chunk or two.
    this.head = `data: {"id":${JSON.stringify(id)},"object":"text_completion","created":${created},"choices":[`;
    this.textHead = `${this.head}{"text":`;
    this.plainTextHead = flat(`${this.textHead}"`);
    this.model = model;
    this.includeUsage = includeUsage;
    this.ending = endingFor(model, fingerprint || null, includeUsage);
    this.idAscii = isAscii(id);
    this.fixedAscii = this.idAscii && this.ending.ascii;
  }

  setFingerprint(fingerprint: string | null | undefined): void {
    if (!fingerprint) return;
    this.ending = endingFor(this.model, fingerprint, this.includeUsage);
    this.fixedAscii = this.idAscii && this.ending.ascii;
  }

  /** One choice's event. */
  choice(index: number, text: string, logprobs: ChoiceLogprobs | null, finishReason: FinishReason | null): string {
    const kind = textKind(text);
    this.ascii = logprobs === null && this.fixedAscii && (kind === plainAscii || (kind === escaped && isAscii(text)));
    if (logprobs === null && finishReason === null) {
      // A plain text goes between the cached pieces that hold its quotes: two joins, not four.
      return kind === escaped ? this.textHead + JSON.stringify(text) + this.closing(index, false) : this.plainTextHead + text + this.closing(index, true);
    }
    const quoted = kind === escaped ? JSON.stringify(text) : `"${text}"`;
    return `${this.textHead}${quoted},"index":${index},"logprobs":${logprobs ? JSON.stringify(logprobs) : 'null'},"finish_reason":${finishReason ? `"${finishReason}"` : 'null'}}${this.ending.tail}${this.ending.end}`;
  }

  /** The usage event (no choices). */
  usage(usage: CompletionUsage): string {
    this.ascii = this.fixedAscii; // the rest is numbers and field names
    return `${this.head}${this.ending.tail}${this.ending.fingerprintJson},"usage":${usageJson(usage)}}\n\n`;
  }

  private closing(index: number, withQuote: boolean): string {
    const ending = this.ending;
    const slot = 2 * index + (withQuote ? 1 : 0);
    let closing = ending.closings[slot];
    if (closing === undefined) {
      closing = flat(`${withQuote ? '"' : ''},"index":${index},"logprobs":null,"finish_reason":null}${ending.tail}${ending.end}`);
      if (index < 1024) ending.closings[slot] = closing;
    }
    return closing;
  }
}
