import { spawnSync } from "node:child_process"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { assert, describe, it } from "vitest"

const startHeap = pathToFileURL(resolve(import.meta.dirname, "../dist/StartHeap.js")).href

interface Spaces {
  readonly newBefore: number
  readonly newHeld: number
  readonly newReleased: number
  readonly oldBeforeRelease: number
  readonly oldAfterRelease: number
  readonly oldUsedAfterRelease: number
}

/**
 * A node process that holds, allocates like a start-up (much of it living, much of it garbage among it), releases,
 * and then allocates the same way again; it prints the heap spaces' sizes at each step (V8's flags are the process's,
 * so each case runs in a process of its own).
 */
const run = (nodeArgs: ReadonlyArray<string> = []): Spaces => {
  const script = `
    import { getHeapSpaceStatistics } from "node:v8"
    import * as StartHeap from ${JSON.stringify(startHeap)}
    const space = (name) => getHeapSpaceStatistics().find((s) => s.space_name === name)
    const startUp = (kept) => {
      for (let i = 0; i < 300_000; i++) {
        const o = { i, s: "x".repeat(i % 50), a: [i, i + 1] }
        if (i % 3 === 0) kept.push(o)
      }
    }
    const newBefore = space("new_space").space_size
    StartHeap.hold()
    const kept = []
    startUp(kept)
    const newHeld = space("new_space").space_size
    // what lives is spread over every page start-up filled: only compacting gives pages back
    for (let i = 0; i < kept.length; i++) if (i % 4 !== 0) kept[i] = undefined
    const oldBeforeRelease = space("old_space").space_size
    StartHeap.release()
    const oldAfterRelease = space("old_space").space_size
    const oldUsedAfterRelease = space("old_space").space_used_size
    startUp(kept)
    const newReleased = space("new_space").space_size
    console.log(JSON.stringify({ newBefore, newHeld, newReleased, oldBeforeRelease, oldAfterRelease, oldUsedAfterRelease }))
  `
  const result = spawnSync(process.execPath, [...nodeArgs, "--input-type=module", "-e", script], { encoding: "utf8" })
  assert.strictEqual(result.status, 0, result.stderr)
  return JSON.parse(result.stdout) as Spaces
}

/**
 * A node process with `--trace-gc` that releases with about 40 MB alive and then keeps allocating what lives; it
 * prints the heap's size at the release and V8's trace of each collection.
 */
const growAfterRelease = (): { readonly released: number; readonly nextFullBefore: number | undefined } => {
  const script = `
    import { getHeapStatistics } from "node:v8"
    import * as StartHeap from ${JSON.stringify(startHeap)}
    StartHeap.hold()
    const kept = []
    for (let i = 0; i < 700_000; i++) kept.push({ i, s: "x".repeat(i % 50), a: [i, i + 1] })
    StartHeap.release()
    console.log("released " + getHeapStatistics().used_heap_size / 1e6)
    const more = []
    for (let i = 0; i < 1_000_000; i++) more.push({ i, s: "y".repeat(20) })
    console.log("done", kept.length, more.length)
  `
  const result = spawnSync(process.execPath, ["--trace-gc", "--input-type=module", "-e", script], { encoding: "utf8" })
  assert.strictEqual(result.status, 0, result.stderr)
  const after = result.stdout.slice(result.stdout.indexOf("released "))
  const released = Number(after.match(/^released ([\d.]+)/)?.[1])
  const nextFull = after.match(/Mark-Compact ([\d.]+) \(/)?.[1]
  return { released, nextFullBefore: nextFull === undefined ? undefined : Number(nextFull) }
}

/**
 * The young generation's largest size in a node process that releases and then allocates, much of it living a
 * while, a slice per turn of the event loop (as a server does), for 120 turns.
 */
const youngUnderLoad = (nodeArgs: ReadonlyArray<string> = []): number => {
  const script = `
    import { getHeapSpaceStatistics } from "node:v8"
    import * as StartHeap from ${JSON.stringify(startHeap)}
    const young = () => getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size
    StartHeap.hold()
    StartHeap.release()
    let live = []
    let largest = 0
    for (let turn = 0; turn < 120; turn++) {
      for (let i = 0; i < 20_000; i++) live.push({ i, s: "x".repeat(i % 50), a: [i] })
      if (live.length > 200_000) live = live.slice(100_000)
      largest = Math.max(largest, young())
      await new Promise((resolve) => setImmediate(resolve))
    }
    console.log(largest)
  `
  const result = spawnSync(process.execPath, [...nodeArgs, "--input-type=module", "-e", script], { encoding: "utf8" })
  assert.strictEqual(result.status, 0, result.stderr)
  return Number(result.stdout.trim())
}

describe("StartHeap", () => {
  it("keeps the young generation small until release, then lets it grow; release compacts the old", () => {
    const spaces = run()
    const unheld = run(["--semi-space-growth-factor=2"])
    assert.isAtMost(spaces.newHeld, 4 * spaces.newBefore)
    assert.isAtLeast(unheld.newHeld, 4 * spaces.newHeld)
    assert.isAbove(spaces.newReleased, spaces.newHeld)
    // the garbage start-up promoted is collected and the pages it left half empty are given back
    assert.isBelow(spaces.oldAfterRelease, spaces.oldBeforeRelease * 0.8)
    assert.isAtMost(spaces.oldUsedAfterRelease, spaces.oldAfterRelease)
  })

  it("after release, the young generation grows up to 16 MB, not to V8's 32; a --max-semi-space-size given to node is left as given", () => {
    const mb = 1024 * 1024
    const capped = youngUnderLoad()
    assert.isAtLeast(capped, 16 * mb, "it grows to the cap")
    assert.isAtMost(capped, 16 * mb)
    assert.strictEqual(youngUnderLoad(["--max-semi-space-size=16"]), 32 * mb)
  })

  it("lets the old generation grow after release as under load, not as V8 would after a collection of an idle heap", () => {
    const { nextFullBefore, released } = growAfterRelease()
    assert.isAbove(released, 30)
    // V8 sets the next limit from how busy the program was around the collection: after one forced in an idle
    // moment, about three times what lives
    assert.isDefined(nextFullBefore, "a full collection follows while the heap grows")
    assert.isBelow(nextFullBefore, released * 1.6)
  })
})
