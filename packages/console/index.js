// Where the built console is: the folder the http package serves at `/`.
import { fileURLToPath, URL } from "node:url"

/** The absolute path of the built console (`dist/`). */
export const root = fileURLToPath(new URL("./dist/", import.meta.url))
