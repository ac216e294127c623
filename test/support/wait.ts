/**
 * Polls a condition until it holds or a deadline passes. Tests wait for state this way instead of
 * sleeping a fixed time, so they stay deterministic on a loaded machine.
 */
export interface WaitForOptions {
  /** How long to keep polling before failing (default 10 s). */
  timeoutMs?: number;
  /** Pause between two polls (default 20 ms). */
  intervalMs?: number;
  /** Said in the error when the deadline passes. */
  message?: string;
}

class WaitTimeoutError extends Error {
  constructor(message: string, readonly lastError?: unknown) {
    super(message);
    this.name = 'WaitTimeoutError';
  }
}

/**
 * Resolves with the first truthy value `cond` returns (sync or async). A throwing `cond` counts as
 * "not yet"; its last error is attached to the timeout error.
 */
export async function waitFor<T>(
  cond: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 20;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await cond();
      if (value) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const reason = lastError instanceof Error ? `: last error: ${lastError.message}` : '';
      throw new WaitTimeoutError(`${options.message ?? 'condition not met'} within ${timeoutMs} ms${reason}`, lastError);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
