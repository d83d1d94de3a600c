import { defineProject } from "vitest/config"

export default defineProject({
  ssr: { resolve: { conditions: ["@botrelay/source"] } },
  test: { name: "example-express", include: ["test/**/*.test.ts"] }
})
