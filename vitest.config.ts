import { defineConfig } from "vitest/config"

export default defineConfig({
  test: { projects: ["packages/*", "!packages/console", "examples/*", "packages/server/vitest.chaos.config.ts"] }
})
