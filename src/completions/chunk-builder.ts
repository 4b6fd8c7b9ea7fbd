/**
 * Builds stream chunks as whole SSE events (`data: {…}\n\n`), the fixed fields serialised once per
 * request, so each chunk is built in one string instead of being copied again into its event.
 *
 * A text chunk is three pieces: the fixed opening, the text, and the closing for its choice index
 * (cached, flat); for a text that needs no escaping, the opening and the closing hold its quotes. V8 joins strings lazily into trees ("cons strings") and copies the tree
 * into one buffer when the response is written; a template literal with a dozen pieces, whose
 * fixed parts were themselves trees, made that copy walk ~25 pieces a chunk (callgrind: ~40k
 * instructions a 20-chunk stream, in `Buffer.byteLength` of the response).
 *
 * `ascii` says whether the event just built is all ASCII, so the writer can send it as latin1:
 * the same bytes as UTF-8 for such text, without measuring and encoding it character by character.
 */
import type { FinishReason } from '../vendors/types.js';
import { flat } from '../vendors/shared/flat-string.js';
import { escaped, isAscii, plainAscii, textKind } from './json-string.js';
import { usageJson, type ChoiceLogprobs, type CompletionUsage } from './completion-objects.js';

export class ChunkBuilder {
  /** `data: {"id":…,"choices":[` */
  private readonly head: string;
  /** `{"text":` after the head: how every text chunk starts. */
  private readonly textHead: string;
  /** `{"text":"` after the head: the same with the text's opening quote, for a text that goes in as it is. */
  private readonly plainTextHead: string;
  /** `],"model":…,"system_fingerprint":` */
  private readonly tail: string;
  private fingerprintJson = 'null';
  /** The fingerprint, then the usage field when the client asked for usage: how every choice chunk ends. */
  private end: string;
  private readonly usageField: string;
  /**
   * Per choice index, the rest of a text chunk after its text (no logprobs, not finished); at
   * `2 * index + 1` the same with the text's closing quote in front.
   */
  private closings: string[] = [];
  /** The id and the model are ASCII (and the fingerprint, once set). */
  private fixedAscii: boolean;
  /** Whether the last event built is all ASCII. */
  ascii = false;

  constructor(id: string, created: number, model: string, includeUsage: boolean) {
    this.head = flat(`data: {"id":${JSON.stringify(id)},"object":"text_completion","created":${created},"choices":[`);
    this.textHead = flat(`${this.head}{"text":`);
    this.plainTextHead = flat(`${this.textHead}"`);
    this.tail = flat(`],"model":${JSON.stringify(model)},"system_fingerprint":`);
    this.usageField = includeUsage ? ',"usage":null' : '';
    this.end = flat(`null${this.usageField}}\n\n`);
    this.fixedAscii = isAscii(this.head) && isAscii(this.tail);
  }

  setFingerprint(fingerprint: string | null | undefined): void {
    if (!fingerprint) return;
    this.fingerprintJson = JSON.stringify(fingerprint);
    this.end = flat(`${this.fingerprintJson}${this.usageField}}\n\n`);
    this.closings = [];
    this.fixedAscii = this.fixedAscii && isAscii(this.fingerprintJson);
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
    return `${this.textHead}${quoted},"index":${index},"logprobs":${logprobs ? JSON.stringify(logprobs) : 'null'},"finish_reason":${finishReason ? `"${finishReason}"` : 'null'}}${this.tail}${this.end}`;
  }

  /** The usage event (no choices). */
  usage(usage: CompletionUsage): string {
    this.ascii = this.fixedAscii; // the rest is numbers and field names
    return `${this.head}${this.tail}${this.fingerprintJson},"usage":${usageJson(usage)}}\n\n`;
  }

  private closing(index: number, withQuote: boolean): string {
    const slot = 2 * index + (withQuote ? 1 : 0);
    let closing = this.closings[slot];
    if (closing === undefined) {
      closing = flat(`${withQuote ? '"' : ''},"index":${index},"logprobs":null,"finish_reason":null}${this.tail}${this.end}`);
      if (index < 1024) this.closings[slot] = closing;
    }
    return closing;
  }
}
