/**
 * Where a suite keeps Botrelay's data: a SQLite file in a temp folder, or a database of a throwaway PostgreSQL
 * cluster (`PgCluster` of @botrelay/testing), with what a server on it needs and the stores for seeding in process.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { Stores } from "@botrelay/core"
import { PostgresStores } from "@botrelay/postgres"
import { SecretKey } from "@botrelay/sql"
import { SqliteStores } from "@botrelay/sqlite"
import { PgCluster } from "@botrelay/testing"
import type { Layer } from "effect"
import pg from "pg"
import { makeTempDir, removeTempDir } from "./harness.js"
import { processTicks } from "./processes.js"

/** A fresh, empty place for Botrelay's data. */
export interface Storage {
  readonly kind: "sqlite" | "postgres"
  /** `BOTRELAY_DATABASE` of the servers on it: a file path or a `postgres://` URL. */
  readonly database: string
  /** What every server on it needs besides the database (`BOTRELAY_SECRET_KEY` for PostgreSQL). */
  readonly env: Record<string, string>
  /** Every store on it, for seeding in process. */
  readonly layer: Layer.Layer<Stores.Stores, unknown>
  /** Busy CPU ticks of the database's own processes so far (0 for SQLite, which runs inside the server). */
  readonly ticks: () => number
  /** Removes it. */
  readonly dispose: () => Promise<void>
}

/** A SQLite file at a path the caller owns; `dispose` leaves it. */
export const sqliteFile = (database: string): Storage => ({
  kind: "sqlite",
  database,
  env: {},
  layer: SqliteStores.layer({ filename: database }),
  ticks: () => 0,
  dispose: () => Promise.resolve()
})

/** A SQLite file in a new temp folder, removed by `dispose`. */
export const sqlite = (): Storage => {
  const dir = makeTempDir()
  return { ...sqliteFile(join(dir, "botrelay.db")), dispose: () => Promise.resolve(removeTempDir(dir)) }
}

/** A throwaway PostgreSQL cluster shared by the runs of a suite. */
export interface Cluster {
  readonly cluster: PgCluster.Cluster
  /** The settings it runs with, for the report. */
  readonly settings: ReadonlyArray<readonly [string, string]>
  readonly stop: () => Promise<void>
}

/** Busy CPU ticks of the postmaster and every process it started (backends, walwriter, checkpointer…). */
const clusterTicks = (postmaster: number): number => {
  let ticks = processTicks(postmaster)
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const parent = Number(readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]!.split(" ")[1])
      if (parent === postmaster) ticks += processTicks(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return ticks
}

const shown = [
  "server_version",
  "fsync",
  "synchronous_commit",
  "full_page_writes",
  "wal_level",
  "shared_buffers",
  "work_mem",
  "max_wal_size",
  "checkpoint_timeout",
  "max_connections"
]

/** Starts a cluster as `PgCluster` starts it for the tests (its defaults, nothing changed). */
export const startCluster = async (): Promise<Cluster> => {
  const cluster = await PgCluster.start()
  try {
    const rows = await cluster.query(
      `SELECT name, setting, unit FROM pg_settings WHERE name IN (${shown.map((name) => `'${name}'`).join(", ")})`
    )
    const byName = new Map(
      rows.map((row) => [String(row["name"]), { setting: String(row["setting"]), unit: row["unit"] as string | null }])
    )
    const settings = shown.flatMap((name) => {
      const row = byName.get(name)
      if (row === undefined) return []
      const unit = row.unit ?? ""
      const value = row.setting
      return [[name, unit === "8kB" ? `${Number(value) * 8 / 1024} MB` : unit === "" ? value : `${value} ${unit}`] as const]
    })
    return { cluster, settings, stop: () => cluster.stop() }
  } catch (error) {
    await cluster.stop()
    throw error
  }
}

/** A new database of the cluster with a new secret key; `pool` connections per server (its default when not given). */
export const postgres = async (cluster: Cluster): Promise<Storage> => {
  const database = await cluster.cluster.createDatabase()
  const secretKey = SecretKey.generate()
  return {
    kind: "postgres",
    database,
    env: { BOTRELAY_SECRET_KEY: SecretKey.toHex(secretKey) },
    layer: PostgresStores.layer({ url: database, secretKey }),
    ticks: () => clusterTicks(cluster.cluster.pid),
    dispose: () => cluster.cluster.dropDatabase(database)
  }
}

/** Runs `f` with a client of a PostgreSQL database, then closes it. */
export const withClient = async <A>(url: string, f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}
