import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

/**
 * What V8 keeps of the server's start-up. Start-up allocates much that lives (modules' code, schemas, the HTTP API),
 * so V8's scavenges find most of the young generation alive and grow it to its largest size (32 MB), and the old
 * generation fills with the garbage they promote; an idle server kept both for the first minute or so, until V8's
 * memory reducer ran. `hold` keeps the young generation at its first size while the server starts; `release`, once it
 * serves, gives V8 back its own growth and runs one full collection that compacts, so the pages start-up left half
 * empty are returned. Flags given to node for either (`--semi-space-growth-factor`, `--compact-on-every-full-gc`)
 * are left as given.
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
  setFlagsFromString("--compact-on-every-full-gc")
  try {
    collect()
  } finally {
    setFlagsFromString("--no-compact-on-every-full-gc")
  }
}
