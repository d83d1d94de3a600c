export * as Config from "./Config.js"
export * as DatabaseLock from "./DatabaseLock.js"
export * as Main from "./Main.js"
export * as Migrate from "./Migrate.js"
