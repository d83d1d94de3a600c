import { constants, PerformanceObserver } from "node:perf_hooks"
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

/**
 * What V8 keeps of the server's start-up. Start-up allocates much that lives (modules' code, schemas, the HTTP API),
 * so V8's scavenges find most of the young generation alive and grow it to its largest size (32 MB), and the old
 * generation fills with the garbage they promote; an idle server kept both for the first minute or so, until V8's
 * memory reducer ran. `hold` keeps the young generation at its first size while the server starts; `release`, once it
 * serves, gives V8 back its own growth and runs one full collection that compacts, so the pages start-up left half
 * empty are returned. V8 sets the old generation's next limit from how busy the program was around a collection, which
 * after one in an idle moment is about three times what lives: that collection grows it by 10 % instead, so the first
 * full collection under load comes early and V8 sets the limits from there as it would have. After `release` the young
 * generation grows to half of V8's largest size at most (`capYoung`). Flags given to node for any of these
 * (`--semi-space-growth-factor`, `--max-semi-space-size`, `--compact-on-every-full-gc`, `--heap-growing-percent`) are
 * left as given.
 */
const given = (flag: string): boolean =>
  [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].some((arg) =>
    arg.replaceAll("_", "-").startsWith(`--${flag}`) || arg.replaceAll("_", "-").startsWith(`--no-${flag}`)
  )

/** Keeps the young generation at its size until `release`. */
export const hold = (): void => {
  if (!given("semi-space-growth-factor")) setFlagsFromString("--semi-space-growth-factor=1")
}

/**
 * The young generation's largest size here: half of V8's own (two 8 MB semi-spaces instead of two 16 MB ones), which
 * is what `--max-semi-space-size=8` would set, had node been started with it.
 */
const youngLimit = 16 * 1024 * 1024

let capped = false
/** Whether the growth factor is V8's own (2) now, not 1. */
let growing = true

/** The young generation's size now (both semi-spaces). */
const youngSize = (): number => getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_size ?? 0

/**
 * Lets the young generation grow only while it is below `youngLimit`: after each scavenge, V8's growth (factor 2) is
 * allowed below it and stopped (factor 1) at it. V8 reads the factor each time it would grow, so this caps the young
 * generation as node's `--max-semi-space-size=8` would; V8 still shrinks it when the server idles.
 */
const capYoung = (): void => {
  if (capped) return
  capped = true
  new PerformanceObserver((list) => {
    const scavenged = list.getEntries().some((entry) =>
      (entry as unknown as { readonly detail?: { readonly kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR
    )
    if (!scavenged) return
    const grow = youngSize() < youngLimit
    if (grow === growing) return
    growing = grow
    setFlagsFromString(`--semi-space-growth-factor=${grow ? 2 : 1}`)
  }).observe({ entryTypes: ["gc"] })
}

/** Gives the young generation V8's growth again (its default factor, 2) up to `youngLimit`, and compacts the heap once. */
export const release = (): void => {
  if (!given("semi-space-growth-factor")) {
    setFlagsFromString("--semi-space-growth-factor=2")
    growing = true
    if (!given("max-semi-space-size")) capYoung()
  }
  if (!given("compact-on-every-full-gc")) compact()
}

const compact = (): void => {
  setFlagsFromString("--expose-gc")
  const collect = runInNewContext("gc") as () => void
  if (!given("expose-gc")) setFlagsFromString("--no-expose-gc")
  const growing = !given("heap-growing-percent")
  setFlagsFromString("--compact-on-every-full-gc")
  if (growing) setFlagsFromString("--heap-growing-percent=10")
  try {
    collect()
  } finally {
    setFlagsFromString("--no-compact-on-every-full-gc")
    if (growing) setFlagsFromString("--heap-growing-percent=0")
  }
}
