export * as Migrations from "./Migrations.js"
export * as PostgresStores from "./PostgresStores.js"
export * as PostgresImport from "./PostgresImport.js"
