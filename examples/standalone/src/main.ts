import { type ChildProcess, spawn, type StdioOptions } from "node:child_process"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"

/** The `botrelay` bin of the installed @botrelay/server (its `dist/bin.js`). */
export const bin = createRequire(import.meta.url).resolve("@botrelay/server/bin")

/** Starts the server in a child process, configured by the `BOTRELAY_*` variables of `env` (.env.example). */
export const start = (env: NodeJS.ProcessEnv = process.env, stdio: StdioOptions = "inherit"): ChildProcess =>
  spawn(process.execPath, [bin], { env, stdio })

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (existsSync(".env")) process.loadEnvFile(".env")
  const server = start()
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.kill(signal))
  server.on("exit", (code, signal) => process.exit(code ?? (signal === null ? 0 : 1)))
}
