import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

/**
 * What V8 keeps of the server's start-up. Start-up allocates much that lives (modules' code, schemas, the HTTP API),
 * so V8's scavenges find most of the young generation alive and grow it to its largest size (32 MB), and the old
 * generation fills with the garbage they promote; an idle server kept both for the first minute or so, until V8's
 * memory reducer ran. `hold` keeps the young generation at its first size while the server starts; `release`, once it
 * serves, gives V8 back its own growth and runs one full collection that compacts, so the pages start-up left half
 * empty are returned. V8 sets the old generation's next limit from how busy the program was around a collection, which
 * after one in an idle moment is about three times what lives: that collection grows it by 10 % instead, so the first
 * full collection under load comes early and V8 sets the limits from there as it would have. Flags given to node for
 * any of these (`--semi-space-growth-factor`, `--compact-on-every-full-gc`, `--heap-growing-percent`) are left as
 * given.
 */
const given = (flag: string): boolean =>
  [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].some((arg) =>
    arg.replaceAll("_", "-").startsWith(`--${flag}`) || arg.replaceAll("_", "-").startsWith(`--no-${flag}`)
  )

/** Keeps the young generation at its size until `release`. */
export const hold = (): void => {
  if (!given("semi-space-growth-factor")) setFlagsFromString("--semi-space-growth-factor=1")
}

/** Gives the young generation V8's own growth again (its default factor, 2) and compacts the heap once. */
export const release = (): void => {
  if (!given("semi-space-growth-factor")) setFlagsFromString("--semi-space-growth-factor=2")
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
