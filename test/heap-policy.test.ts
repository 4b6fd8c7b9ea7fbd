/**
 * The GC policy `serve` applies: parallel scavenges stay on unless the process has one core (or
 * the operator says otherwise), and turning them off after start takes effect and keeps the
 * process sound through many young-generation GCs.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { scavengesInParallel } from '../src/server/heap-policy.js';

test('auto keeps parallel scavenges with more than one core and drops them with one; on and off are obeyed', () => {
  assert.equal(scavengesInParallel('auto', 1), false);
  assert.equal(scavengesInParallel('auto', 2), true);
  assert.equal(scavengesInParallel('auto', 64), true);
  assert.equal(scavengesInParallel('on', 1), true);
  assert.equal(scavengesInParallel('off', 8), false);
});

test('turned off at start, every later scavenge runs on the main thread alone and the process finishes normally', () => {
  const policy = new URL('../src/server/heap-policy.js', import.meta.url).href;
  // Allocates ~200 MB in short-lived objects (dozens of scavenges) with a rolling set kept alive,
  // so each scavenge has survivors to copy: work V8 would otherwise split across helper threads.
  const program = `
    const { applyHeapPolicy } = await import(${JSON.stringify(policy)});
    applyHeapPolicy({ growingPercent: 60, parallelScavenge: 'off' });
    console.log('applied');
    let keep = [];
    for (let i = 0; i < 2_000_000; i++) {
      keep.push({ i, text: 'x'.repeat(i % 64) });
      if (keep.length > 20_000) keep = [];
    }
    console.log('done', keep.length);
  `;
  const result = spawnSync(process.execPath, ['--trace-gc-nvp', '--input-type=module', '-e', program], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(result.status, 0, result.stderr);
  const after = result.stdout.slice(result.stdout.indexOf('applied'));
  assert.match(after, /done \d+/);
  const scavenges = after.split('\n').filter((line) => line.includes(' gc=s '));
  assert.ok(scavenges.length >= 5, `expected several scavenges, saw ${scavenges.length}`);
  for (const line of scavenges) {
    const background = /background\.scavenge\.parallel=([0-9.]+)/.exec(line);
    assert.ok(background, line);
    assert.equal(Number(background[1]), 0, line);
  }
});
