export * as Migrations from "./Migrations.js"
export * as SqliteStores from "./SqliteStores.js"
export * as SecretKey from "./SecretKey.js"
