/**
 * The V8 policy `serve` applies: parallel scavenges stay on unless the process has one core (or
 * the operator says otherwise), and turning them off after start takes effect and keeps the
 * process sound through many young-generation GCs; WebAssembly compiled after start stays on the
 * baseline compiler unless tier-up is asked for.
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
    applyHeapPolicy({ growingPercent: 60, parallelScavenge: 'off', wasmTierUp: true });
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

/** A WebAssembly function `f(n)` summing n, n-1, … 1 in a loop: hot enough for V8 to tier it up. */
const sumModule = [
  0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 127, 1, 127, 3, 2, 1, 0, 7, 5, 1, 1, 102, 0, 0, 10, 27, 1, 25, 1, 1, 127, 3, 64, 32, 1, 32, 0, 106, 33, 1, 32, 0,
  65, 1, 107, 34, 0, 13, 0, 11, 32, 1, 11,
];

for (const wasmTierUp of [false, true]) {
  test(`with WebAssembly tier-up ${wasmTierUp ? 'on' : 'off (the default)'}, a hot function compiled after start ${wasmTierUp ? 'is optimised' : 'stays on the baseline compiler'} and answers the same`, () => {
    const policy = new URL('../src/server/heap-policy.js', import.meta.url).href;
    const program = `
      const { applyHeapPolicy } = await import(${JSON.stringify(policy)});
      applyHeapPolicy({ growingPercent: 60, parallelScavenge: 'auto', wasmTierUp: ${wasmTierUp} });
      const { instance } = await WebAssembly.instantiate(new Uint8Array(${JSON.stringify(sumModule)}));
      let total = 0;
      for (let round = 0; round < 4; round++) {
        for (let i = 0; i < 100000; i++) total += instance.exports.f(100);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      console.log(JSON.stringify({ total, liftoff: %IsLiftoffFunction(instance.exports.f), optimised: %IsTurboFanFunction(instance.exports.f) }));
    `;
    const result = spawnSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', program], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(result.status, 0, result.stderr);
    const seen = JSON.parse(result.stdout.trim()) as { total: number; liftoff: boolean; optimised: boolean };
    assert.equal(seen.total, 400_000 * 5050);
    assert.equal(seen.optimised, wasmTierUp);
    assert.equal(seen.liftoff, !wasmTierUp);
  });
}
