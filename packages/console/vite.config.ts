import react from "@vitejs/plugin-react"
import { defineConfig } from "vite"

// Relative asset URLs: the server writes `<base href>` into index.html, so the same build works at `/`
// and under any embed prefix. `pnpm dev` proxies the API to a server on BOTRELAY_URL.
export default defineConfig({
  base: "./",
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, assetsDir: "assets", sourcemap: false, chunkSizeWarningLimit: 800 },
  server: {
    proxy: Object.fromEntries(
      ["/api", "/tgapi"].map((path) => [path, { target: process.env.BOTRELAY_URL ?? "http://127.0.0.1:8080" }])
    )
  }
})
