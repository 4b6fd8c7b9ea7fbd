/**
 * An upstream request body written as JSON text one field at a time. `JSON.stringify` of a
 * six-field completions body cost ~8k instructions (its serialiser's setup and per-object walk
 * dominate for so small an object); appending each field's text is a fraction of that. Field names
 * are the adapter's own constants (plain ASCII, written as they are); strings go through
 * `jsonString`, numbers JSON cannot write become `null` as `JSON.stringify` writes them, and
 * arrays and objects (stop lists, token prompts, logit_bias) go through `JSON.stringify` whole.
 */
import { jsonString } from './json-string.js';

export class JsonBody {
  private fields = '';

  string(name: string, value: string): this {
    this.fields += `,"${name}":${jsonString(value)}`;
    return this;
  }

  number(name: string, value: number): this {
    this.fields += `,"${name}":${Number.isFinite(value) ? `${value}` : 'null'}`;
    return this;
  }

  boolean(name: string, value: boolean): this {
    this.fields += `,"${name}":${value ? 'true' : 'false'}`;
    return this;
  }

  /** Any JSON value (an array, an object), written by `JSON.stringify`. */
  value(name: string, value: unknown): this {
    this.fields += `,"${name}":${JSON.stringify(value)}`;
    return this;
  }

  /** JSON text the caller wrote itself. */
  raw(name: string, json: string): this {
    this.fields += `,"${name}":${json}`;
    return this;
  }

  get text(): string {
    return `{${this.fields.slice(1)}}`;
  }
}
