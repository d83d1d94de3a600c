import { defineProject } from "vitest/config"

export default defineProject({
  ssr: { resolve: { conditions: ["@botrelay/source"] } },
  test: { name: "example-grammy-webhook", include: ["test/**/*.test.ts"] }
})
