import { defineProject } from "vitest/config"

// The chaos test runs alone, after every other project: its failover figures are timings on a quiet machine.
export default defineProject({
  ssr: { resolve: { conditions: ["@botrelay/source"] } },
  test: {
    name: "chaos",
    include: ["test/Chaos.test.ts"],
    testTimeout: 150_000,
    hookTimeout: 60_000,
    sequence: { groupOrder: 1 }
  }
})
