/** The per-request metric families render exactly what prom-client's own metrics render for the same updates. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { CounterFamily, HistogramFamily } from '../src/observability/metric-families.js';

const buckets = [0.001, 0.01, 0.1, 1];
const observations = [0, 0.001, 0.0010001, 0.005, 0.01, 0.5, 1, 3, 120, 0.00042];

function sortedLines(text: string): string[] {
  // Label order inside braces may differ; Prometheus does not care, so compare label sets.
  return text.split('\n').filter(Boolean).map((line) => line.replace(/\{([^}]*)\}/, (_all, inner: string) => `{${inner.split(',').sort().join(',')}}`)).sort();
}

test('a histogram family renders the same buckets, sum and count as prom-client', async () => {
  const ours = new Registry();
  const theirs = new Registry();
  const family = new HistogramFamily({ name: 'h_seconds', help: 'help', labelNames: ['vendor', 'stream'], buckets, registry: ours });
  const reference = new Histogram({ name: 'h_seconds', help: 'help', labelNames: ['vendor', 'stream'], buckets, registers: [theirs] });
  for (const [index, value] of observations.entries()) {
    const vendor = index % 2 === 0 ? 'openai' : 'local';
    family.labels(vendor, 'true').observe(value);
    reference.labels(vendor, 'true').observe(value);
  }
  assert.deepEqual(sortedLines(await ours.metrics()), sortedLines(await theirs.metrics()));
});

test('a counter family renders the same values as prom-client, with and without labels', async () => {
  const ours = new Registry();
  const theirs = new Registry();
  const labelled = new CounterFamily({ name: 'c_total', help: 'help', labelNames: ['account', 'kind'], registry: ours });
  const plain = new CounterFamily({ name: 'p_total', help: 'help', registry: ours });
  const labelledReference = new Counter({ name: 'c_total', help: 'help', labelNames: ['account', 'kind'], registers: [theirs] });
  const plainReference = new Counter({ name: 'p_total', help: 'help', registers: [theirs] });
  for (const amount of [1, 5, 0, 12]) {
    labelled.labels('acct_a', 'prompt').inc(amount);
    labelledReference.labels('acct_a', 'prompt').inc(amount);
    labelled.labels('acct "b"', 'completion').inc();
    labelledReference.labels('acct "b"', 'completion').inc();
    plain.inc(amount);
    plainReference.inc(amount);
  }
  assert.deepEqual(sortedLines(await ours.metrics()), sortedLines(await theirs.metrics()));
});

test('bad updates are refused like prom-client refuses them', () => {
  const registry = new Registry();
  const counter = new CounterFamily({ name: 'c_total', help: 'help', registry });
  const histogram = new HistogramFamily({ name: 'h', help: 'help', buckets, registry });
  assert.throws(() => counter.inc(-1), TypeError);
  assert.throws(() => counter.inc(Number.NaN), TypeError);
  assert.throws(() => histogram.observe(Number.POSITIVE_INFINITY), TypeError);
  assert.throws(() => new CounterFamily({ name: 'c_total', help: 'again', registry }), /already been registered/);
  assert.throws(() => new CounterFamily({ name: 'x_total', help: 'help', labelNames: ['a'], registry }).labels('1', '2'), /takes 1 label values/);
});
