/**
 * A Bot API emulator on 127.0.0.1, usable from tests, benchmarks and examples. The storage
 * conformance suite loads vitest, so it has its own entry: `@botrelay/testing/StoreSuite`.
 */
export * as FakeTelegram from "./FakeTelegram.js"
export * as FakeLlm from "./FakeLlm.js"
export { eventually } from "./Eventually.js"
export * as PgCluster from "./PgCluster.js"
