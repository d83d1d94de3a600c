import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { type Child, freePort, start, waitHealthy } from "./processes.js"

const here = dirname(fileURLToPath(import.meta.url))

/** The repository root, where children run. */
export const root = resolve(here, "../..")

/** The compiled bench, for children such as `bare.js`. */
export const distDir = here

/** The built `botrelay` bin (BENCH_BIN: another script of the server, e.g. `packages/server/dist/Entry.js`, unbundled). */
export const serverBin = join(root, process.env["BENCH_BIN"] ?? "packages/server/dist/bin.js")

/** A positive integer from the environment; `allowZero` lets 0 switch a part off. */
export const envInt = (name: string, fallback: number, allowZero = false): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new Error(`${name} must be a ${allowZero ? "non-negative" : "positive"} integer, got "${raw}"`)
  }
  return value
}

/** BENCH_CPU_PROF: a folder where each Botrelay server child writes a `--cpu-prof` profile. */
export const cpuProf = process.env["BENCH_CPU_PROF"]

/** BENCH_NODE_ARGS: more node options for each Botrelay server child, space-separated (e.g. `--trace-gc`). */
const nodeArgs = (process.env["BENCH_NODE_ARGS"] ?? "").split(" ").filter((arg) => arg !== "")

const tempDirs = new Set<string>()

/** A fresh folder under the system temp folder, removed by `removeTempDir` or at exit. */
export const makeTempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "botrelay-bench-"))
  tempDirs.add(dir)
  return dir
}

export const removeTempDir = (dir: string): void => {
  rmSync(dir, { recursive: true, force: true })
  tempDirs.delete(dir)
}

export const removeTempDirs = (): void => {
  for (const dir of [...tempDirs]) removeTempDir(dir)
}

/** A running Botrelay server and the headers that authenticate as its admin. */
export interface Botrelay {
  readonly child: Child
  readonly url: string
  readonly headers: Record<string, string>
}

/** What a server start may add: its environment (a secret key, an instance id), and an admin key shared with other instances. */
export interface StartOptions {
  readonly env?: Record<string, string>
  readonly adminKey?: string
}

/** A new admin key, as `botrelay keys create` makes them. */
export const newAdminKey = (): string => `brk_${randomBytes(32).toString("base64url")}`

/** Starts `node packages/server/dist/bin.js` on a free port with a new admin key and waits until it is healthy. */
export const startBotrelay = async (
  database: string,
  telegramApi: string,
  name = "botrelay",
  options: StartOptions = {}
): Promise<Botrelay> => {
  const adminKey = options.adminKey ?? newAdminKey()
  const port = await freePort()
  const profile = cpuProf === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${resolve(cpuProf)}`]
  const child = start(name, [...profile, ...nodeArgs, serverBin], {
    BOTRELAY_DATABASE: database,
    BOTRELAY_PORT: String(port),
    BOTRELAY_HOST: "127.0.0.1",
    BOTRELAY_ADMIN_KEY: adminKey,
    BOTRELAY_TELEGRAM_API: telegramApi,
    BOTRELAY_LOG_LEVEL: "warn",
    // the benches measure throughput; the /api rate limit would refuse most of it
    BOTRELAY_API_RATE_LIMIT: "0",
    ...options.env
  }, root)
  const url = `http://127.0.0.1:${port}`
  await waitHealthy(child, url)
  return { child, url, headers: { authorization: `Bearer ${adminKey}` } }
}

/** Registers a bot through the API; throws unless it answers 200 within 30 s. */
export const addBot = async (botrelay: Botrelay, body: Record<string, unknown>): Promise<{ readonly id: number }> => {
  const response = await fetch(`${botrelay.url}/api/bots/add`, {
    method: "POST",
    headers: { ...botrelay.headers, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000)
  })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`POST /api/bots/add: ${response.status} ${text.slice(0, 300)}`)
  return JSON.parse(text) as { readonly id: number }
}

/** A plain-text table; the first `left` columns are left-aligned, the others right-aligned. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>, left: number) => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => i < left ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)).join("  ").trimEnd()
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n")
}

/** An integer with thousands separators. */
export const count = (n: number): string => Math.round(n).toLocaleString("en-US")

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))
