export * as StorageSuite from "./StorageSuite.js"
export * as FakeTelegram from "./FakeTelegram.js"
