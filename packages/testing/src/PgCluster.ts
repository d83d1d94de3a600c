import { type ChildProcess, execFile, spawn } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Data, Effect } from "effect"
import pg from "pg"

/**
 * A throwaway PostgreSQL cluster for tests, from Debian's `postgresql` package: `initdb` into a temp dir,
 * `pg_ctl start` on a unix socket in that dir (or 127.0.0.1 on a free port), fsync off, trust auth for the
 * `postgres` user. Run as root, the server runs as the `postgres` user (initdb refuses root). `stop`
 * removes everything; a watchdog does the same when the process that started it dies without stopping it.
 */

/** Where Debian installs PostgreSQL: `/usr/lib/postgresql/<version>/bin`. */
const debianRoot = "/usr/lib/postgresql"

const tools = ["initdb", "pg_ctl", "postgres"] as const

/** The newest `/usr/lib/postgresql/<version>/bin` holding initdb, pg_ctl and postgres; `BOTRELAY_PG_BIN` overrides. */
const findBinDir = (): string | undefined => {
  const override = process.env["BOTRELAY_PG_BIN"]
  const has = (dir: string) => tools.every((tool) => existsSync(join(dir, tool)))
  if (override !== undefined && override !== "") return has(override) ? override : undefined
  let versions: Array<string>
  try {
    versions = readdirSync(debianRoot)
  } catch {
    return undefined
  }
  return versions
    .filter((v) => /^\d+(\.\d+)?$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => join(debianRoot, v, "bin"))
    .find(has)
}

/** The bin dir of the PostgreSQL the clusters run; undefined when none is installed. */
export const binDir: string | undefined = findBinDir()

/** Whether clusters can be started here. */
export const available: boolean = binDir !== undefined

/** Why tests that need PostgreSQL are skipped, when they are. */
export const unavailableReason =
  "PostgreSQL binaries not found in /usr/lib/postgresql/*/bin (apt-get install postgresql; .ci/run does): " +
  "the PostgreSQL tests are skipped"

/** The cluster could not be started or used. */
export class PgClusterError extends Data.TaggedError("PgClusterError")<{ readonly message: string }> {}

/** A running cluster. */
export interface Cluster {
  /** The temp dir holding the data dir, the socket and the log. */
  readonly dir: string
  /** Where the server listens: the socket dir, or "127.0.0.1". */
  readonly host: string
  readonly port: number
  /** The server's log file. */
  readonly log: string
  /** The postmaster's pid (a new one after `resume`). */
  readonly pid: number
  /** The URL of a database of the cluster (user `postgres`, no password). */
  readonly url: (database: string) => string
  /** Creates an empty database (a copy of `template` when given); its URL. */
  readonly createDatabase: (options?: { readonly template?: string; readonly name?: string }) => Promise<string>
  /** Drops a database (by name or URL), ending its connections. */
  readonly dropDatabase: (nameOrUrl: string) => Promise<void>
  /** Runs SQL (statements separated by `;`) as the superuser on a database (default `postgres`); the last one's rows. */
  readonly query: (text: string, database?: string) => Promise<Array<Record<string, unknown>>>
  /** Stops the server (a lost database: its connections are ended), keeping its data; `resume` starts it again. */
  readonly halt: () => Promise<void>
  /** Starts the server `halt` stopped, on the same data, host and port. */
  readonly resume: () => Promise<void>
  /** Stops the server and removes the temp dir; safe to call twice. */
  readonly stop: () => Promise<void>
}

export interface Options {
  /** "socket" (default): a unix socket in the temp dir, no TCP. "tcp": 127.0.0.1 on a free port. */
  readonly listen?: "socket" | "tcp"
}

/** The uid and gid of a user from /etc/passwd. */
const userIds = (name: string): { uid: number; gid: number } | undefined => {
  try {
    for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
      const [user, , uid, gid] = line.split(":")
      if (user === name && uid !== undefined && gid !== undefined) return { uid: Number(uid), gid: Number(gid) }
    }
  } catch {
    return undefined
  }
  return undefined
}

/** Who runs the server: ourselves, or (as root) the `postgres` user, else `nobody`. */
const runAs = (): { uid: number; gid: number } | undefined => {
  if (process.getuid?.() !== 0) return undefined
  const ids = userIds("postgres") ?? userIds("nobody")
  if (ids === undefined) throw new PgClusterError({ message: "running as root, and there is no postgres or nobody user to run PostgreSQL as" })
  return ids
}

const run = (file: string, args: ReadonlyArray<string>, as: { uid: number; gid: number } | undefined) =>
  new Promise<void>((resolve, reject) => {
    execFile(file, args, { ...(as ?? {}), env: { ...process.env, LC_ALL: "C" }, timeout: 60_000 }, (error, _stdout, stderr) => {
      if (error === null) resolve()
      else reject(new PgClusterError({ message: `${file.split("/").pop()} failed: ${stderr.trim() || error.message}` }))
    })
  })

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port")))
    })
  })

/** The database a URL of `Cluster.url` names. */
export const databaseOf = (url: string): string =>
  decodeURIComponent(/^postgres(?:ql)?:\/\/[^/]*\/([^?]*)/.exec(url)?.[1] ?? "")

/** Whether a process runs (exists and is not a zombie waiting for its parent to reap it). */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}

const quoteIdent = (name: string) => `"${name.replaceAll("\"", "\"\"")}"`

let databases = 0

/** Starts a cluster. Fails when no PostgreSQL is installed (check `available` first). */
export const start = async (options: Options = {}): Promise<Cluster> => {
  if (binDir === undefined) throw new PgClusterError({ message: unavailableReason })
  const bin = binDir
  const as = runAs()
  const dir = mkdtempSync(join(tmpdir(), "botrelay-pg-"))
  let watchdog: ChildProcess | undefined
  const data = join(dir, "data")
  const log = join(dir, "postgres.log")
  const remove = () => rmSync(dir, { recursive: true, force: true })
  try {
    if (as !== undefined) chownSync(dir, as.uid, as.gid)
    await run(join(bin, "initdb"), ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"], as)
    const tcp = options.listen === "tcp"
    const port = tcp ? await freePort() : 5432
    const host = tcp ? "127.0.0.1" : dir
    const settings = [
      `-c listen_addresses='${tcp ? "127.0.0.1" : ""}'`,
      `-p ${port}`,
      `-k ${dir}`,
      "-c fsync=off",
      "-c synchronous_commit=off",
      "-c full_page_writes=off",
      "-c max_connections=200",
      "-c shared_buffers=32MB"
    ].join(" ")
    const pidFile = join(data, "postmaster.pid")
    const startServer = async () => {
      await run(join(bin, "pg_ctl"), ["-D", data, "-l", log, "-o", settings, "-w", "-t", "30", "start"], as)
      return Number(readFileSync(pidFile, "utf8").split("\n")[0])
    }
    /** "immediate" loses the last commits (synchronous_commit is off): for the end only. */
    const stopServer = async (mode: "fast" | "immediate") => {
      if (!existsSync(pidFile)) return
      await run(join(bin, "pg_ctl"), ["-D", data, "-m", mode, "-w", "-t", "30", "stop"], as)
      // The postmaster exits just after it removes its pid file.
      for (let i = 0; i < 100 && alive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    let pid = await startServer()
    // Stops the server and removes the dir once this process is gone, unless `stop` ended the watchdog first.
    watchdog = spawn(
      "/bin/sh",
      [
        "-c",
        `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ` +
        `kill -QUIT "$(head -n 1 '${pidFile}' 2>/dev/null)" 2>/dev/null; sleep 1; rm -rf '${dir}'`
      ],
      { detached: true, stdio: "ignore" }
    )
    watchdog.unref()

    const url = (database: string) =>
      tcp
        ? `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(database)}`
        : `postgres://postgres@/${encodeURIComponent(database)}?host=${encodeURIComponent(dir)}`

    const query = async (text: string, database = "postgres") => {
      const client = new pg.Client({ connectionString: url(database) })
      await client.connect()
      try {
        const result: pg.QueryResult | Array<pg.QueryResult> = await client.query(text)
        return (Array.isArray(result) ? result[result.length - 1]!.rows : result.rows) as Array<Record<string, unknown>>
      } finally {
        await client.end()
      }
    }

    let stopped: Promise<void> | undefined
    const stop = () =>
      stopped ??= (async () => {
        if (watchdog?.pid !== undefined) {
          try {
            process.kill(watchdog.pid)
          } catch {
            // already gone
          }
        }
        try {
          await stopServer("immediate")
        } finally {
          remove()
        }
      })()

    return {
      dir,
      host,
      port,
      log,
      get pid() {
        return pid
      },
      url,
      query,
      halt: () => stopServer("fast"),
      resume: async () => {
        pid = await startServer()
      },
      createDatabase: async (options = {}) => {
        const name = options.name ?? `botrelay_${process.pid}_${++databases}`
        const create = `CREATE DATABASE ${quoteIdent(name)}${
          options.template === undefined ? "" : ` TEMPLATE ${quoteIdent(options.template)} STRATEGY FILE_COPY`
        }`
        // A template a closed pool just used may still show its last connections for a moment (55006).
        for (let attempt = 1;; attempt++) {
          try {
            await query(create)
            return url(name)
          } catch (error) {
            if ((error as { code?: string }).code !== "55006" || attempt >= 40) throw error
            await new Promise((resolve) => setTimeout(resolve, 50))
          }
        }
      },
      dropDatabase: async (nameOrUrl) => {
        const name = nameOrUrl.includes("://") ? databaseOf(nameOrUrl) : nameOrUrl
        await query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`)
      },
      stop
    }
  } catch (error) {
    if (watchdog?.pid !== undefined) process.kill(watchdog.pid)
    if (existsSync(join(data, "postmaster.pid"))) {
      await run(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"], as).catch(() => undefined)
    }
    remove()
    throw error instanceof PgClusterError ? error : new PgClusterError({ message: String(error) })
  }
}

/** A cluster for the scope: started on acquire, stopped and removed on release. */
export const scoped = (options: Options = {}) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => start(options),
      catch: (e) => e instanceof PgClusterError ? e : new PgClusterError({ message: String(e) })
    }),
    (cluster) => Effect.promise(() => cluster.stop())
  )

/** A new database of the cluster for the scope (a copy of `template` when given), dropped on release; its URL. */
export const database = (cluster: Cluster, options: { readonly template?: string } = {}) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => cluster.createDatabase(options),
      catch: (e) => new PgClusterError({ message: `could not create a database: ${String(e)}` })
    }),
    (url) => Effect.promise(() => cluster.dropDatabase(url))
  )
