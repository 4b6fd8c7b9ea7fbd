/**
 * Builds stream chunks as whole SSE events (`data: {…}\n\n`), the fixed fields serialised once per
 * request, so each chunk is built in one string instead of being copied again into its event.
 */
import type { FinishReason } from '../vendors/types.js';
import type { ChoiceLogprobs, CompletionUsage } from './completion-objects.js';

export class ChunkBuilder {
  private readonly head: string;
  private readonly tail: string;
  private fingerprintJson = 'null';
  /** The fingerprint, then the usage field when the client asked for usage: how every choice chunk ends. */
  private end: string;
  private readonly usageField: string;

  constructor(id: string, created: number, model: string, includeUsage: boolean) {
    this.head = `data: {"id":${JSON.stringify(id)},"object":"text_completion","created":${created},"choices":[`;
    this.tail = `],"model":${JSON.stringify(model)},"system_fingerprint":`;
    this.usageField = includeUsage ? ',"usage":null' : '';
    this.end = `null${this.usageField}}\n\n`;
  }

  setFingerprint(fingerprint: string | null | undefined): void {
    if (!fingerprint) return;
    this.fingerprintJson = JSON.stringify(fingerprint);
    this.end = `${this.fingerprintJson}${this.usageField}}\n\n`;
  }

  /** One choice's event. */
  choice(index: number, text: string, logprobs: ChoiceLogprobs | null, finishReason: FinishReason | null): string {
    return `${this.head}{"text":${JSON.stringify(text)},"index":${index},"logprobs":${logprobs ? JSON.stringify(logprobs) : 'null'},"finish_reason":${finishReason ? `"${finishReason}"` : 'null'}}${this.tail}${this.end}`;
  }

  /** The usage event (no choices). */
  usage(usage: CompletionUsage): string {
    return `${this.head}${this.tail}${this.fingerprintJson},"usage":${JSON.stringify(usage)}}\n\n`;
  }
}
