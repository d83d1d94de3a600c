// The `botrelay` bin: tsc's dist/Entry.js and everything it loads, bundled by esbuild into dist/bin.js and the
// chunks it loads when it needs them (dist/chunks/). One server process then holds only the code it runs, without
// comments, and each module once: about 20 MB less heap than the same code as the packages' modules (docs/performance.md).
// Native modules stay outside (better-sqlite3, @node-rs/argon2), and so does the console, whose files are found
// next to its own module.
import { chmodSync, rmSync } from "node:fs"
import { fileURLToPath, URL } from "node:url"
import * as esbuild from "esbuild"

const root = fileURLToPath(new URL("..", import.meta.url))

rmSync(`${root}/dist/chunks`, { recursive: true, force: true })
await esbuild.build({
  absWorkingDir: root,
  entryPoints: { bin: "dist/Entry.js" },
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
  banner: { js: "import { createRequire as __botrelayRequire } from 'node:module'; const require = __botrelayRequire(import.meta.url);" },
  logLevel: "warning"
})
chmodSync(`${root}/dist/bin.js`, 0o755)
