import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import react from "@vitejs/plugin-react"
import { defineConfig, type Plugin } from "vite"

/** Writes `<file>.gz` beside each script and stylesheet; the server sends it to clients that accept gzip. */
const precompress = (): Plugin => ({
  name: "botrelay-precompress",
  apply: "build",
  writeBundle(options, bundle) {
    for (const name of Object.keys(bundle)) {
      if (!/\.(js|css|svg|json)$/.test(name)) continue
      const file = join(options.dir ?? "dist", name)
      writeFileSync(`${file}.gz`, gzipSync(readFileSync(file), { level: 9 }))
    }
  }
})

// Relative asset URLs: the server writes `<base href>` into index.html, so the same build works at `/`
// and under any embed prefix. `pnpm dev` proxies the API to a server on BOTRELAY_URL.
export default defineConfig({
  base: "./",
  plugins: [react(), precompress()],
  build: { outDir: "dist", emptyOutDir: true, assetsDir: "assets", sourcemap: false },
  server: {
    proxy: Object.fromEntries(
      ["/api", "/tgapi"].map((path) => [path, { target: process.env.BOTRELAY_URL ?? "http://127.0.0.1:8080" }])
    )
  }
})
