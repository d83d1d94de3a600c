import { configDefaults, defineProject } from "vitest/config"

export default defineProject({
  ssr: { resolve: { conditions: ["@botrelay/source"] } },
  test: {
    name: "server",
    include: ["test/**/*.test.ts"],
    exclude: [...configDefaults.exclude, "test/Chaos.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
