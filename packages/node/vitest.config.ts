import { defineProject } from "vitest/config"

export default defineProject({
  ssr: { resolve: { conditions: ["@botrelay/source"] } },
  test: { name: "node", include: ["test/**/*.test.ts"], testTimeout: 30_000, hookTimeout: 30_000 }
})
