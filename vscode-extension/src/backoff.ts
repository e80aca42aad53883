// When the server crashes: restart after 1 s, 2 s, 4 s … (capped), and give
// up after `maxCrashes` crashes within `windowMs`. Pure; time is passed in.

export interface BackoffOptions {
  initialDelayMs: number;
  maxDelayMs: number;
  maxCrashes: number;
  windowMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = {
  initialDelayMs: 1000,
  maxDelayMs: 30000,
  maxCrashes: 5,
  windowMs: 3 * 60 * 1000,
};

export type CrashDecision =
  | { action: "restart"; delayMs: number; crashesInWindow: number }
  | { action: "giveUp"; crashesInWindow: number };

export class CrashPolicy {
  private crashes: number[] = [];
  constructor(private readonly opts: BackoffOptions = DEFAULT_BACKOFF) {}

  /** Records a crash at `now` (ms) and says what to do. */
  onCrash(now: number): CrashDecision {
    this.crashes = this.crashes.filter((t) => now - t < this.opts.windowMs);
    this.crashes.push(now);
    const n = this.crashes.length;
    if (n >= this.opts.maxCrashes) {
      return { action: "giveUp", crashesInWindow: n };
    }
    const delayMs = Math.min(this.opts.maxDelayMs, this.opts.initialDelayMs * 2 ** (n - 1));
    return { action: "restart", delayMs, crashesInWindow: n };
  }

  /** Forgets past crashes (a restart the user asked for). */
  reset(): void {
    this.crashes = [];
  }
}
