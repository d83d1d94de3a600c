export * as Config from "./Config.js"
export * as Main from "./Main.js"
