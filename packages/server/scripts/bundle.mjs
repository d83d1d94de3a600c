// The `botrelay` bin: tsc's dist/Entry.js and everything it loads, bundled by esbuild into dist/bin.js and the
// chunks it loads (dist/chunks/). A server process then holds only the code it runs, without comments, and each
// module once: about 20 MB less heap than the same code as the packages' modules (docs/performance.md). Native modules
// stay outside (better-sqlite3, @node-rs/argon2), and so does the console, whose files are found next to its module.
import { chmodSync, readdirSync, rmSync } from "node:fs"
import { fileURLToPath, URL } from "node:url"
import * as esbuild from "esbuild"

const root = fileURLToPath(new URL("..", import.meta.url))

/**
 * Where the chunks are cut: each of these is bundled as an entry of its own too, so the code the bin shares with it
 * becomes chunks of their own, none over about 600 kB. V8 parses a module's top level in one piece, into memory it
 * frees afterwards but the C allocator often keeps: one chunk of 1.6 MB left about 18 MB of it in the process in half
 * the starts. The entries' own files are not needed and are removed.
 */
const splitAt = [
  "effect/Effect",
  "effect/Layer",
  "effect/Schema",
  "effect/Stream",
  "@effect/platform/HttpApiBuilder",
  "@botrelay/core",
  "@botrelay/http",
  "@botrelay/node"
]

rmSync(`${root}/dist/chunks`, { recursive: true, force: true })
await esbuild.build({
  absWorkingDir: root,
  entryPoints: { bin: "dist/Entry.js", ...Object.fromEntries(splitAt.map((module, i) => [`split-${i}`, module])) },
  outdir: "dist",
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: ["better-sqlite3", "@node-rs/argon2", "@botrelay/console", "pg-native"],
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  // CommonJS dependencies call require(), which an ES module has to make
  banner: {
    js: "import { createRequire as __botrelayRequire } from 'node:module'; const require = __botrelayRequire(import.meta.url);"
  },
  logLevel: "warning"
})
for (const file of readdirSync(`${root}/dist`)) if (/^split-\d+\.js$/.test(file)) rmSync(`${root}/dist/${file}`)
chmodSync(`${root}/dist/bin.js`, 0o755)
