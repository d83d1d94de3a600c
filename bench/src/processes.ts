import { spawn, type ChildProcess } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"

/** A Node process the bench started, with the tail of its output. */
export interface Child {
  readonly name: string
  readonly process: ChildProcess
  readonly exited: Promise<void>
  output: string
}

/** Every child started so far, so cleanup can stop them all. */
export const children: Array<Child> = []

/** A port that was free a moment ago on 127.0.0.1. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() =>
        typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))
      )
    })
  })

/** Runs `node <args>`; its output goes to stderr, each line prefixed with the name. */
export const start = (
  name: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  cwd: string
): Child => {
  const proc = spawn(process.execPath, [...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const child: Child = {
    name,
    process: proc,
    exited: new Promise((done) => proc.once("exit", () => done())),
    output: ""
  }
  const collect = (chunk: Buffer) => {
    const text = chunk.toString()
    child.output = (child.output + text).slice(-16_384)
    process.stderr.write(text.replace(/^(?=.)/gm, `[${name}] `))
  }
  proc.stdout?.on("data", collect)
  proc.stderr?.on("data", collect)
  children.push(child)
  return child
}

export const isRunning = (child: Child): boolean =>
  child.process.exitCode === null && child.process.signalCode === null

/** SIGTERM, then SIGKILL after `grace` ms; resolves whether it had to be killed. */
export const stopWithin = async (child: Child, grace: number): Promise<boolean> => {
  if (!isRunning(child)) return false
  child.process.kill("SIGTERM")
  const timeout = new Promise<"timeout">((done) => setTimeout(() => done("timeout"), grace).unref())
  if (await Promise.race([child.exited.then(() => "exited" as const), timeout]) === "timeout") {
    child.process.kill("SIGKILL")
    await child.exited
    return true
  }
  return false
}

/** SIGTERM, then SIGKILL after 5 s. */
export const stop = async (child: Child): Promise<void> => {
  await stopWithin(child, 5_000)
}

/** Polls `GET /api/health` until it answers 200; fails after 20 s or when the child exits. */
export const waitHealthy = async (child: Child, baseUrl: string): Promise<void> => {
  const deadline = Date.now() + 20_000
  let last = "no answer"
  while (Date.now() < deadline) {
    if (!isRunning(child)) {
      throw new Error(`${child.name} exited (${child.process.exitCode ?? child.process.signalCode}):\n${child.output}`)
    }
    try {
      const response = await fetch(`${baseUrl}/api/health`, { signal: AbortSignal.timeout(1_000) })
      await response.arrayBuffer()
      if (response.status === 200) return
      last = `status ${response.status}`
    } catch (e) {
      last = String(e)
    }
    await new Promise((done) => setTimeout(done, 100))
  }
  throw new Error(`${child.name} did not answer GET /api/health with 200 within 20 s (${last}):\n${child.output}`)
}

/** Current and peak resident memory of a running child, from /proc/<pid>/status. */
export const memory = (child: Child): string => {
  if (!isRunning(child) || child.process.pid === undefined) return "exited"
  const status = readFileSync(`/proc/${child.process.pid}/status`, "utf8")
  const field = (name: string) => status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, "m"))?.[1]
  const mb = (kb: string | undefined) => kb === undefined ? "?" : `${(Number(kb) / 1024).toFixed(1)} MB`
  return `VmRSS ${mb(field("VmRSS"))} (peak VmHWM ${mb(field("VmHWM"))})`
}

/** Clock ticks per second of /proc/stat and /proc/<pid>/stat (USER_HZ). */
export const ticksPerSecond = 100

/** Busy CPU ticks of the whole machine, from /proc/stat. */
export const machineTicks = (): number => {
  const n = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number)
  return n.reduce((a, b) => a + b, 0) - n[3]! - n[4]!
}

/** User and system CPU ticks of a process, from /proc/<pid>/stat; 0 once it is gone. */
export const processTicks = (pid: number | undefined): number => {
  if (pid === undefined) return 0
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

/** A memory figure of a running child from /proc/<pid>/status, in MB (VmRSS now, VmHWM peak); NaN once gone. */
export const memoryMb = (child: Child, field: "VmRSS" | "VmHWM"): number => {
  if (!isRunning(child) || child.process.pid === undefined) return Number.NaN
  const status = readFileSync(`/proc/${child.process.pid}/status`, "utf8")
  const kb = status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"))?.[1]
  return kb === undefined ? Number.NaN : Number(kb) / 1024
}
