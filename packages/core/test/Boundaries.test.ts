import { readdirSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { assert, describe, it } from "vitest"

const packages = resolve(import.meta.dirname, "../..")

const sources = (pkg: string, folder = "src"): Array<[string, string]> =>
  readdirSync(join(packages, pkg, folder), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => [`${pkg}/${folder}/${file}`, readFileSync(join(packages, pkg, folder, file), "utf8")])

const imports = (source: string) => [...source.matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)].map((m) => m[1]!)

const forbidden = (pkg: string, banned: (specifier: string) => boolean, folders = ["src"]) =>
  folders.flatMap((folder) => sources(pkg, folder)).flatMap(([file, text]) =>
    imports(text).filter(banned).map((specifier) => `${file} imports ${specifier}`)
  )

describe("package boundaries (DESIGN.md section 1)", () => {
  it("core imports no node:*, kysely, better-sqlite3, platform-node, and of ours only telegram", () => {
    assert.deepStrictEqual(
      forbidden("core", (s) =>
        s.startsWith("node:") || s === "kysely" || s === "better-sqlite3" || s.startsWith("@effect/platform-node") ||
        (s.startsWith("@botrelay/") && !s.startsWith("@botrelay/telegram"))),
      []
    )
  })

  it("telegram has no workspace deps and no node-specific imports", () => {
    assert.deepStrictEqual(
      forbidden("telegram", (s) => s.startsWith("@botrelay/") || s.startsWith("node:") || s.startsWith("@effect/platform-node")),
      []
    )
  })

  it("http never imports platform-node or node:*", () => {
    assert.deepStrictEqual(
      forbidden("http", (s) => s.startsWith("node:") || s.startsWith("@effect/platform-node") || s.startsWith("@botrelay/server")),
      []
    )
  })

  it("nothing imports the server package", () => {
    for (const pkg of ["telegram", "core", "sqlite", "http", "testing"]) {
      assert.deepStrictEqual(forbidden(pkg, (s) => s.startsWith("@botrelay/server"), ["src", "test"]), [])
    }
  })

  it("http and the node front call services, never a store", () => {
    const store = /\b(?:Storage\.Storage|(\w*Store)\.\1)\b/
    const files = [...sources("http"), ...sources("node").filter(([file]) => file !== "node/src/Botrelay.ts")]
    assert.deepStrictEqual(files.filter(([, text]) => store.test(text)).map(([file]) => file), [])
  })
})

describe("core's folders (DESIGN.md section 8)", () => {
  /** What each folder may import from the others: arrows point one way, down this list. */
  const below: Record<string, ReadonlyArray<string>> = {
    internal: [],
    domain: ["internal"],
    stores: ["domain", "internal"],
    runtime: ["stores", "domain", "internal"],
    services: ["runtime", "stores", "domain", "internal"]
  }

  it("internal ← domain ← stores ← runtime ← services; only the composition (Runtime.ts) and index.ts sit above", () => {
    const crossings = sources("core").flatMap(([file, text]) => {
      const folder = file.split("/")[2]!
      const allowed = below[folder]
      if (allowed === undefined) return []
      return imports(text)
        .map((specifier) => /^\.\.\/(\w+)\//.exec(specifier)?.[1])
        .filter((target): target is string => target !== undefined && !allowed.includes(target))
        .map((target) => `${file} imports from ${target}/`)
    })
    assert.deepStrictEqual(crossings, [])
    assert.deepStrictEqual(
      readdirSync(join(packages, "core", "src")).filter((entry) => entry.endsWith(".ts")).sort(),
      ["Runtime.ts", "index.ts"]
    )
  })
})
