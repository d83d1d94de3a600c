import { existsSync, readFileSync, statSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { assert, beforeAll, describe, it } from "vitest"

const bin = resolve(import.meta.dirname, "../dist/bin.js")

/** The files `file` imports statically (`import … from "./…"`, `import "./…"`), followed through each. */
const staticallyLoaded = (...files: ReadonlyArray<string>): Set<string> => {
  const loaded = new Set<string>()
  const follow = (file: string) => {
    if (loaded.has(file)) return
    loaded.add(file)
    for (const match of readFileSync(file, "utf8").matchAll(/(?:import|from)\s*"(\.\/[^"]+)"/g)) {
      follow(join(dirname(file), match[1]!))
    }
  }
  for (const file of files) follow(file)
  return loaded
}

/** What `botrelay serve` loads: the bin, the CLI's chunk it imports first, and theirs. */
const serving = (): Set<string> => {
  const cli = readFileSync(bin, "utf8").match(/import\("(\.\/chunks\/Cli-[^"]+)"\)/)?.[1]
  assert.isDefined(cli, "the bin loads the CLI's chunk")
  return staticallyLoaded(bin, join(dirname(bin), cli))
}

describe("the bundled bin", () => {
  beforeAll(() => {
    assert.isTrue(existsSync(bin), "build first: pnpm build")
  })

  it("loads the demo's chunk only for the demo command", () => {
    const code = [...serving()].map((file) => readFileSync(file, "utf8")).join("\n")
    assert.match(code, /Listening on/)
    assert.notMatch(code, /FakeTelegram/)
    assert.match(code, /import\("\.\/Demo-[^"]+"\)/)
  })

  it("is cut into chunks of at most 800 kB, each a file that exists", () => {
    const files = serving()
    assert.isAtLeast(files.size, 5)
    for (const file of files) {
      assert.isTrue(existsSync(file), file)
      assert.isAtMost(statSync(file).size, 800_000, file)
    }
  })
})
