/** Builds the JSON of stream chunks; the fixed fields are serialised once per request. */
import type { FinishReason } from '../vendors/types.js';
import type { ChoiceLogprobs, CompletionUsage } from './completion-objects.js';

export class ChunkBuilder {
  private readonly head: string;
  private readonly tail: string;
  private fingerprint: string | null = null;
  private readonly usageField: string;

  constructor(id: string, created: number, model: string, includeUsage: boolean) {
    this.head = `{"id":${JSON.stringify(id)},"object":"text_completion","created":${created},"choices":[`;
    this.tail = `],"model":${JSON.stringify(model)},"system_fingerprint":`;
    this.usageField = includeUsage ? ',"usage":null' : '';
  }

  setFingerprint(fingerprint: string | null | undefined): void {
    if (fingerprint) this.fingerprint = fingerprint;
  }

  choice(index: number, text: string, logprobs: ChoiceLogprobs | null, finishReason: FinishReason | null): string {
    const choice = `{"text":${JSON.stringify(text)},"index":${index},"logprobs":${logprobs ? JSON.stringify(logprobs) : 'null'},"finish_reason":${finishReason ? `"${finishReason}"` : 'null'}}`;
    return `${this.head}${choice}${this.tail}${JSON.stringify(this.fingerprint)}${this.usageField}}`;
  }

  usage(usage: CompletionUsage): string {
    return `${this.head}${this.tail}${JSON.stringify(this.fingerprint)},"usage":${JSON.stringify(usage)}}`;
  }
}
