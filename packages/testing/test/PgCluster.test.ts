import { PgCluster } from "@botrelay/testing"
import { assert, describe, it } from "@effect/vitest"
import { existsSync } from "node:fs"
import pg from "pg"

const select = async (url: string, text: string) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text)).rows
  } finally {
    await client.end()
  }
}

describe.skipIf(!PgCluster.available)("PgCluster", () => {
  it("starts on a unix socket, makes databases (empty or from a template), stops and removes everything", async () => {
    const cluster = await PgCluster.start()
    try {
      assert.isTrue(existsSync(`${cluster.dir}/.s.PGSQL.${cluster.port}`))
      assert.strictEqual(cluster.host, cluster.dir)
      const settings = await cluster.query("SELECT current_setting('fsync') AS fsync, current_setting('listen_addresses') AS listen")
      assert.deepStrictEqual(settings, [{ fsync: "off", listen: "" }])

      const template = await cluster.createDatabase()
      await select(template, "CREATE TABLE t (n int); INSERT INTO t VALUES (7)")
      const copy = await cluster.createDatabase({ template: PgCluster.databaseOf(template) })
      assert.deepStrictEqual(await select(copy, "SELECT n FROM t"), [{ n: 7 }])
      const empty = await cluster.createDatabase()
      assert.deepStrictEqual(await select(empty, "SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 't'"), [{ n: 0 }])

      await cluster.dropDatabase(copy)
      const names = (await cluster.query("SELECT datname FROM pg_database")).map((r) => r["datname"])
      assert.notInclude(names, PgCluster.databaseOf(copy))
      assert.include(names, PgCluster.databaseOf(template))
    } finally {
      await cluster.stop()
    }
    assert.isFalse(existsSync(cluster.dir))
    assert.isFalse(PgCluster.alive(cluster.pid))
    await cluster.stop()
  }, 60_000)

  it("halts and resumes the server on the same data; stop removes everything after a halt too", async () => {
    const cluster = await PgCluster.start()
    try {
      const url = await cluster.createDatabase()
      await select(url, "CREATE TABLE t (n int); INSERT INTO t VALUES (1)")
      const before = cluster.pid
      await cluster.halt()
      assert.isFalse(PgCluster.alive(before))
      await cluster.resume()
      assert.notStrictEqual(cluster.pid, before)
      assert.deepStrictEqual(await select(url, "SELECT n FROM t"), [{ n: 1 }])
      await cluster.halt()
    } finally {
      await cluster.stop()
    }
    assert.isFalse(existsSync(cluster.dir))
  }, 60_000)

  it("listens on 127.0.0.1 on a free port when asked", async () => {
    const cluster = await PgCluster.start({ listen: "tcp" })
    try {
      assert.strictEqual(cluster.host, "127.0.0.1")
      assert.isAbove(cluster.port, 0)
      const url = await cluster.createDatabase()
      assert.match(url, new RegExp(`^postgres://postgres@127\\.0\\.0\\.1:${cluster.port}/`))
      assert.deepStrictEqual(await select(url, "SELECT 1 AS one"), [{ one: 1 }])
    } finally {
      await cluster.stop()
    }
    assert.isFalse(existsSync(cluster.dir))
  }, 60_000)
})

if (!PgCluster.available) {
  describe("PgCluster", () => {
    it.skip(PgCluster.unavailableReason, () => {})
  })
}
