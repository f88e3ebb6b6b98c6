/**
 * Where the time of a GRPO step goes: a process-wide stopwatch by phase name, off unless a benchmark
 * turns it on (`toolrl bench` splits `grpo_step_seconds` into prefill, decode, environments, scoring,
 * backward, optimizer). Every backend we use executes ops synchronously, so wall time around a call is the
 * time of its kernels; when the clock is off, `timed` is one branch and a call.
 */

/** Milliseconds spent per phase since the clock was started. */
export type PhaseTimes = Record<string, number>;

let active: PhaseTimes | null = null;

/** Start (or restart) recording; returns the live record that `timed` adds to. */
export function startPhaseClock(): PhaseTimes {
  active = {};
  return active;
}

/** Stop recording and return what was recorded ({} when the clock was not running). */
export function stopPhaseClock(): PhaseTimes {
  const out = active ?? {};
  active = null;
  return out;
}

/** Add `ms` to phase `name` when the clock runs. */
export function addPhase(name: string, ms: number): void {
  if (active !== null) active[name] = (active[name] ?? 0) + ms;
}

/** Run f, charging its wall time to phase `name` when the clock runs. */
export function timed<T>(name: string, f: () => T): T {
  if (active === null) return f();
  const t0 = performance.now();
  try {
    return f();
  } finally {
    addPhase(name, performance.now() - t0);
  }
}
