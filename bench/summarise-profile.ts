/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time by function, by file and by
 * package, and inclusive time by function (each function counted once per stack).
 * Usage: node dist/bench/summarise-profile.js FILE.cpuprofile [TOP]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface Entry {
  key: string;
  ms: number;
  percent: number;
}

export interface ProfileSummary {
  totalMs: number;
  byFunction: Entry[];
  byFile: Entry[];
  byPackage: Entry[];
  inclusive: Entry[];
  /** Self time of node internals, native code and GC charged to the nearest Tollgate or library frame below it. */
  byOwner: Entry[];
}

const root = fileURLToPath(new URL('../../', import.meta.url));

function shortUrl(url: string): string {
  if (!url) return '';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  return path.startsWith(root) ? path.slice(root.length) : path;
}

function packageOf(node: ProfileNode): string {
  const { url, functionName } = node.callFrame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native/V8)';
  const path = shortUrl(url);
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (module) return module[1];
  if (path.startsWith('node:')) return 'node internals';
  const own = /^dist\/(src\/[^/]+)/.exec(path);
  if (own) return `tollgate ${own[1]}`;
  return path;
}

/** Tollgate's own code or a library: the frames worth charging time to. */
function isOwner(node: ProfileNode): boolean {
  const path = shortUrl(node.callFrame.url);
  return path.startsWith('dist/') || path.includes('node_modules/');
}

function ownerKey(node: ProfileNode): string {
  const path = shortUrl(node.callFrame.url);
  return `${node.callFrame.functionName || '(anonymous)'}  ${path}:${node.callFrame.lineNumber + 1}`;
}

function functionKey(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const name = functionName || '(anonymous)';
  return url ? `${name}  ${shortUrl(url)}:${lineNumber + 1}` : name;
}

function ranked(totals: Map<string, number>, totalMs: number, top: number): Entry[] {
  return [...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([key, ms]) => ({ key, ms, percent: (ms / totalMs) * 100 }));
}

export function summariseProfile(profile: CpuProfile, top = 25): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<number, number>();
  if (profile.samples && profile.timeDeltas) {
    // timeDeltas[i + 1] is the time spent in samples[i] until the next sample was taken.
    for (let index = 0; index < profile.samples.length; index++) {
      const delta = profile.timeDeltas[index + 1] ?? 0;
      self.set(profile.samples[index], (self.get(profile.samples[index]) ?? 0) + Math.max(0, delta) / 1000);
    }
  } else {
    const total = (profile.endTime - profile.startTime) / 1000;
    const hits = profile.nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0) || 1;
    for (const node of profile.nodes) self.set(node.id, ((node.hitCount ?? 0) / hits) * total);
  }
  const idle = new Set(profile.nodes.filter((node) => node.callFrame.functionName === '(idle)').map((node) => node.id));
  let totalMs = 0;
  for (const [id, ms] of self) if (!idle.has(id)) totalMs += ms;
  const add = (map: Map<string, number>, key: string, ms: number) => map.set(key, (map.get(key) ?? 0) + ms);
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  const byPackage = new Map<string, number>();
  for (const [id, ms] of self) {
    if (idle.has(id) || ms === 0) continue;
    const node = byId.get(id)!;
    add(byFunction, functionKey(node), ms);
    add(byFile, shortUrl(node.callFrame.url) || node.callFrame.functionName, ms);
    add(byPackage, packageOf(node), ms);
  }
  // Inclusive: a node's self time counts for every distinct function on its stack.
  const inclusive = new Map<string, number>();
  const byOwner = new Map<string, number>();
  const rootNode = profile.nodes[0];
  const stack: { node: ProfileNode; keys: Set<string>; owner: string }[] = [{ node: rootNode, keys: new Set(), owner: '(no Tollgate or library frame)' }];
  while (stack.length > 0) {
    const { node, keys, owner: parentOwner } = stack.pop()!;
    const key = functionKey(node);
    const own = new Set(keys);
    if (node.callFrame.url) own.add(key);
    const owner = isOwner(node) ? ownerKey(node) : parentOwner;
    const ms = idle.has(node.id) ? 0 : self.get(node.id) ?? 0;
    if (ms > 0) {
      for (const entry of own) add(inclusive, entry, ms);
      add(byOwner, owner, ms);
    }
    for (const child of node.children ?? []) stack.push({ node: byId.get(child)!, keys: own, owner });
  }
  return {
    totalMs,
    byFunction: ranked(byFunction, totalMs, top),
    byFile: ranked(byFile, totalMs, top),
    byPackage: ranked(byPackage, totalMs, top),
    inclusive: ranked(inclusive, totalMs, top),
    byOwner: ranked(byOwner, totalMs, top),
  };
}

export function formatSummary(summary: ProfileSummary): string {
  const lines: string[] = [`Busy CPU time in profile: ${summary.totalMs.toFixed(0)} ms (idle excluded)`];
  const section = (title: string, entries: Entry[]) => {
    lines.push('', title);
    for (const entry of entries) lines.push(`  ${entry.percent.toFixed(1).padStart(5)}%  ${entry.ms.toFixed(0).padStart(6)} ms  ${entry.key}`);
  };
  section('Self time by package / area:', summary.byPackage);
  section('Self time by file:', summary.byFile);
  section('Self time by function:', summary.byFunction);
  section('Self time charged to the nearest Tollgate/library frame (node internals, native code and GC included):', summary.byOwner);
  section('Inclusive time by function (callees included):', summary.inclusive);
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node dist/bench/summarise-profile.js FILE.cpuprofile [TOP]\n');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  process.stdout.write(`${formatSummary(summariseProfile(profile, Number(process.argv[3] ?? 25)))}\n`);
}
