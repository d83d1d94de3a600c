import { Effect, Scheduler } from "effect"

type Later = (task: () => void) => void

const host = globalThis as { readonly setImmediate?: Later }

/** Runs a task after pending I/O and timers: `setImmediate` where the host has it, otherwise a 0 ms timer. */
const later: Later = typeof host.setImmediate === "function"
  ? host.setImmediate.bind(globalThis)
  : (task) => void setTimeout(task, 0)

const macrotask = Scheduler.make(later)

/**
 * Lets the event loop run (I/O, timers, other fibers) before going on. `Effect.yieldNow()` alone resumes
 * on a microtask, before any I/O is handled; this one resumes on a macrotask.
 */
export const yieldToEventLoop: Effect.Effect<void> = Effect.withScheduler(Effect.yieldNow(), macrotask)
