/** The delay before try `attempt` (1 = after the first failure): base × 2^(attempt − 1), capped. */
export function exponentialBackoff(baseMs: number, attempt: number, capMs: number): number {
  return Math.min(capMs, baseMs * 2 ** Math.min(Math.max(0, attempt - 1), 30));
}
