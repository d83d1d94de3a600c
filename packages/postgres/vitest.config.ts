import { defineProject } from "vitest/config"

export default defineProject({
  ssr: { resolve: { conditions: ["@botrelay/source"] } },
  test: { name: "postgres", include: ["test/**/*.test.ts"], testTimeout: 30_000, hookTimeout: 60_000 }
})
