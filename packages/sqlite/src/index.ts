export * as Migrations from "./Migrations.js"
export * as SqliteStorage from "./SqliteStorage.js"
export type * as Tables from "./Tables.js"
export * as SecretKey from "./SecretKey.js"
