/** How many of the process's active resources are of one kind (`'Timeout'`, `'TCPSocketWrap'`…): for tests that prove nothing outlived a call. */
export function activeCount(kind: string): number {
  return process.getActiveResourcesInfo().filter((name) => name === kind).length;
}
