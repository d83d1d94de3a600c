/** The secret key and cipher, shared by the drivers (`@botrelay/sql`). */
export * from "@botrelay/sql/SecretKey"
