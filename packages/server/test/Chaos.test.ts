import { type ChildProcess, spawn } from "node:child_process"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { resolve } from "node:path"
import { afterAll, assert, describe, it, onTestFailed } from "vitest"
import { FakeTelegram, PgCluster } from "@botrelay/testing"
import { newKey } from "./Harness.js"

// Issue 18, item 5 (DESIGN.md section 12): three real server processes on one PostgreSQL database, updates
// streaming for 20 bots; one instance is killed (SIGKILL) mid-stream and restarted, another paused (SIGSTOP)
// past its lease and resumed. Real lease timings: renewed every 3 s, expiring after 10 s.

const bin = resolve(import.meta.dirname, "../dist/bin.js")
const secretKey = "c4".repeat(32)
const adminKey = newKey()
const botCount = 20
/** Each bot gets one update per tick. */
const tickMs = 250
/** The most deliveries a bot may get twice per fault: one claimed batch (DESIGN.md section 12, "In flight"). */
const inFlight = 50

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const until = async <A>(check: () => A | undefined | Promise<A | undefined>, timeout: number, what: string) => {
  const deadline = Date.now() + timeout
  while (true) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what}`)
    await sleep(50)
  }
}

/** The instance id in `botrelay (<id>)`, the User-Agent of a server's own calls. */
const instanceOf = (userAgent: string | undefined) => /^botrelay \((.+)\)$/.exec(userAgent ?? "")?.[1]

interface Instance {
  readonly id: string
  readonly child: ChildProcess
  readonly baseUrl: string
  readonly output: () => string
  readonly exited: Promise<void>
}

const children = new Set<ChildProcess>()
const outputs: Array<{ id: string; output: () => string }> = []
let cluster: PgCluster.Cluster | undefined
let fake: FakeTelegram.FakeTelegram | undefined
let backend: Server | undefined
/** Stops the update stream and the status sampler, should the test end early. */
let stopLoad = () => {}

afterAll(async () => {
  stopLoad()
  for (const child of children) child.kill("SIGKILL")
  backend?.closeAllConnections()
  await new Promise<void>((done) => backend === undefined ? done() : backend.close(() => done()))
  await fake?.close()
  await cluster?.stop()
})

const launch = async (id: string, database: string): Promise<Instance> => {
  const child = spawn(process.execPath, [bin, "serve"], {
    env: {
      PATH: process.env.PATH ?? "",
      BOTRELAY_DATABASE: `${database}${database.includes("?") ? "&" : "?"}application_name=${id}`,
      BOTRELAY_SECRET_KEY: secretKey,
      BOTRELAY_ADMIN_KEY: adminKey,
      BOTRELAY_TELEGRAM_API: fake!.apiRoot,
      BOTRELAY_PORT: "0",
      BOTRELAY_HOST: "127.0.0.1",
      BOTRELAY_INSTANCE_ID: id,
      BOTRELAY_LOG_LEVEL: "info",
      BOTRELAY_API_RATE_LIMIT: "0"
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.add(child)
  let output = ""
  child.stdout.on("data", (chunk) => output += chunk)
  child.stderr.on("data", (chunk) => output += chunk)
  outputs.push({ id, output: () => output })
  const exited = new Promise<void>((done) =>
    child.on("exit", () => {
      children.delete(child)
      done()
    })
  )
  const port = await until(
    () => {
      if (child.exitCode !== null) throw new Error(`${id} exited:\n${output}`)
      return /Listening on http:\/\/[^:]+:(\d+)/.exec(output)?.[1]
    },
    30_000,
    `${id} to listen`
  )
  return { id, child, baseUrl: `http://127.0.0.1:${port}`, output: () => output, exited }
}

const api = async (instance: Instance, path: string, body?: unknown) => {
  const response = await fetch(`${instance.baseUrl}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(5000)
  })
  const text = await response.text()
  assert.strictEqual(response.status, 200, `${path} on ${instance.id}: ${text}`)
  return JSON.parse(text)
}

interface Lease {
  readonly instance_id: string
  readonly epoch: number
}

/** One answer of `GET /api/status`: when it was asked and answered, the live instances and each bot's lease. */
interface Sample {
  readonly start: number
  readonly end: number
  readonly live: ReadonlySet<string>
  readonly leases: ReadonlyMap<number, Lease | null>
}

const sampleOf = async (instance: Instance): Promise<Sample> => {
  const start = Date.now()
  const status = await api(instance, "/api/status")
  return {
    start,
    end: Date.now(),
    live: new Set(status.instances.map((i: { id: string }) => i.id)),
    leases: new Map(status.bots.map((b: { bot_id: number; lease: Lease | null }) => [b.bot_id, b.lease]))
  }
}

const botsOf = (sample: Sample, instanceId: string) =>
  [...sample.leases].filter(([, lease]) => lease?.instance_id === instanceId).map(([botId]) => botId)

/** What the backend received: the bot (its Telegram id, from the path), the update, when, and which instance sent it. */
interface Arrival {
  readonly bot: number
  readonly update_id: number
  readonly at: number
  readonly instance: string | undefined
}

const fmt = (ms: number) => `${(ms / 1000).toFixed(1)} s`

if (PgCluster.available) {
  describe("chaos: three instances on one PostgreSQL database", () => {
    it("keeps every update once, delivers it, keeps order, fails over within 15 s after SIGKILL and SIGSTOP", async () => {
      const began = Date.now()
      onTestFailed(() => {
        for (const { id, output } of outputs) console.log(`--- ${id}, the end of its output:\n${output().slice(-4000)}`)
      })
      cluster = await PgCluster.start()
      const databaseUrl = await cluster.createDatabase()
      const database = PgCluster.databaseOf(databaseUrl)
      fake = await FakeTelegram.start()
      const arrivals: Array<Arrival> = []
      backend = createServer((req, res) => {
        let body = ""
        req.on("data", (chunk) => body += chunk)
        req.on("end", () => {
          arrivals.push({
            bot: Number(/^\/hook\/(\d+)$/.exec(req.url ?? "")?.[1]),
            update_id: JSON.parse(body).update_id,
            at: Date.now(),
            instance: instanceOf(req.headers["user-agent"])
          })
          res.writeHead(200).end()
        })
      })
      await new Promise<void>((done) => backend!.listen(0, "127.0.0.1", done))
      const backendRoot = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`

      const ids = ["i1", "i2", "i3"]
      const instances = new Map<string, Instance>()
      for (const instance of await Promise.all(ids.map((id) => launch(id, databaseUrl)))) instances.set(instance.id, instance)
      // Every inbox row as committed: by which instance (its connections' application_name), under whose lease.
      await cluster.query(
        `CREATE TABLE chaos_commits (bot_id bigint, update_id bigint, app text, lease_instance text, lease_epoch bigint,
           at double precision);
         CREATE FUNCTION chaos_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
           INSERT INTO chaos_commits SELECT NEW.bot_id, NEW.update_id, current_setting('application_name'),
             l.instance_id, l.epoch, extract(epoch FROM clock_timestamp()) * 1000
             FROM (SELECT 1) one LEFT JOIN botrelay_leases l ON l.bot_id = NEW.bot_id;
           RETURN NEW;
         END $$;
         CREATE TRIGGER chaos_commit AFTER INSERT ON botrelay_inbox FOR EACH ROW EXECUTE FUNCTION chaos_commit()`,
        database
      )

      const user = fake.addUser()
      const tgBots = Array.from({ length: botCount }, () => fake!.addBot())
      const tgOf = new Map<number, number>()
      for (const tg of tgBots) {
        const added = await api(instances.get("i1")!, "/api/bots/add", {
          token: tg.token,
          proxy_enabled: true,
          backend_url: `${backendRoot}/hook/${tg.id}`
        })
        tgOf.set(added.id, tg.id)
      }

      /** Every update injected, per Telegram bot id, with when. */
      const injected = new Map<number, Array<{ update_id: number; at: number }>>(tgBots.map((tg) => [tg.id, []]))
      let ticks = 0
      const inject = () => {
        ticks++
        for (const tg of tgBots) {
          fake!.userSends(tg.id, { user, text: `update ${ticks}` })
          const pending = fake!.pendingUpdates(tg.id)
          injected.get(tg.id)!.push({ update_id: pending[pending.length - 1]!.update_id, at: Date.now() })
        }
      }

      // Balanced (each instance holds ⌈20/3⌉ = 7 at most) and every bot delivering.
      inject()
      const firstUpdates = new Map([...injected].map(([tg, list]) => [tg, list[0]!.update_id]))
      await until(async () => {
        const sample = await sampleOf(instances.get("i1")!)
        const counts = ids.map((id) => botsOf(sample, id).length)
        const delivered = new Set(arrivals.filter((a) => firstUpdates.get(a.bot) === a.update_id).map((a) => a.bot))
        return counts.every((n) => n >= 6 && n <= 7) && delivered.size === botCount ? true : undefined
      }, 30_000, "20 bots leased across 3 instances and delivering")

      const samples: Array<Sample> = []
      let sampleFrom = "i1"
      let sampling = true
      const sampler = (async () => {
        while (sampling) {
          try {
            samples.push(await sampleOf(instances.get(sampleFrom)!))
          } catch {
            // An instance being killed or paused: the next one asks a live instance.
          }
          await sleep(150)
        }
      })()
      const stream = setInterval(inject, tickMs)
      stopLoad = () => {
        clearInterval(stream)
        sampling = false
      }
      const latestSample = () => samples[samples.length - 1]!

      /** When each bot of `moved` had a lease on another live instance and delivered an update injected after `from`. */
      const failover = async (lost: string, moved: ReadonlyArray<number>, from: number) => {
        const leased = new Map<number, number>()
        const delivered = new Map<number, number>()
        await until(() => {
          for (const sample of samples) {
            if (sample.start <= from) continue
            for (const botId of moved) {
              const lease = sample.leases.get(botId)
              if (!leased.has(botId) && lease && lease.instance_id !== lost && sample.live.has(lease.instance_id)) {
                leased.set(botId, sample.end)
              }
            }
          }
          for (const botId of moved) {
            if (delivered.has(botId)) continue
            const tg = tgOf.get(botId)!
            const after = injected.get(tg)!.find((u) => u.at > from)
            const arrival = after && arrivals.find((a) => a.bot === tg && a.update_id === after.update_id)
            if (arrival) delivered.set(botId, arrival.at)
          }
          return leased.size === moved.length && delivered.size === moved.length ? true : undefined
        }, 30_000, `the bots of ${lost} to resume elsewhere`)
        const at = Math.max(...leased.values(), ...delivered.values())
        return { total: at - from, lease: Math.max(...leased.values()) - from }
      }

      // SIGKILL the instance holding the most bots, mid-stream.
      await sleep(3000)
      const beforeKill = await sampleOf(instances.get("i1")!)
      const killed = ids.reduce((a, b) => botsOf(beforeKill, b).length > botsOf(beforeKill, a).length ? b : a)
      const killedBots = botsOf(beforeKill, killed)
      sampleFrom = ids.find((id) => id !== killed)!
      const killedAt = Date.now()
      instances.get(killed)!.child.kill("SIGKILL")
      await instances.get(killed)!.exited
      const afterKill = await failover(killed, killedBots, killedAt)
      console.log(
        `chaos: SIGKILL ${killed} (${killedBots.length} bots): leases elsewhere after ${fmt(afterKill.lease)}, ` +
          `every bot delivering again after ${fmt(afterKill.total)}`
      )

      // Restart it with the same id: it rejoins and takes its share again.
      instances.set(killed, await launch(killed, databaseUrl))
      await until(() => {
        const sample = latestSample()
        return sample.start > Date.now() - 1000 && botsOf(sample, killed).length >= 6 ? true : undefined
      }, 30_000, `${killed} to take its share again`)

      // SIGSTOP another instance holding bots, past its lease; SIGCONT once its bots resumed elsewhere.
      const beforePause = await sampleOf(instances.get(sampleFrom)!)
      const paused = ids.filter((id) => id !== killed).reduce((a, b) =>
        botsOf(beforePause, b).length > botsOf(beforePause, a).length ? b : a
      )
      const pausedBots = botsOf(beforePause, paused)
      const epochAtPause = new Map(pausedBots.map((botId) => [botId, beforePause.leases.get(botId)!.epoch]))
      sampleFrom = ids.find((id) => id !== killed && id !== paused)!
      const pausedAt = Date.now()
      instances.get(paused)!.child.kill("SIGSTOP")
      const afterPause = await failover(paused, pausedBots, pausedAt)
      console.log(
        `chaos: SIGSTOP ${paused} (${pausedBots.length} bots): leases elsewhere after ${fmt(afterPause.lease)}, ` +
          `every bot delivering again after ${fmt(afterPause.total)}`
      )
      await sleep(Math.max(0, pausedAt + 12_500 - Date.now()))
      const resumedAt = Date.now()
      instances.get(paused)!.child.kill("SIGCONT")
      await until(() => {
        assert.isNull(instances.get(paused)!.child.exitCode, `${paused} exited after SIGCONT`)
        const sample = latestSample()
        return sample.start > resumedAt && botsOf(sample, paused).length >= 6 ? true : undefined
      }, 30_000, `${paused} to take its share again after SIGCONT`)
      await sleep(1000)

      // The stream stops; the backlog drains.
      clearInterval(stream)
      const all = [...injected].flatMap(([tg, list]) => list.map((u) => `${tg}:${u.update_id}`))
      await until(() => {
        const seen = new Set(arrivals.map((a) => `${a.bot}:${a.update_id}`))
        return all.every((key) => seen.has(key)) ? true : undefined
      }, 30_000, "every update at the backend")
      sampling = false
      await sampler
      const drainedAt = Date.now()

      // Storage: every update exactly once, each committed by the instance holding the bot's lease.
      const rows = await cluster.query("SELECT bot_id, update_id FROM botrelay_inbox", database) as Array<
        { bot_id: number; update_id: number }
      >
      const stored = rows.map((r) => `${tgOf.get(Number(r.bot_id))}:${r.update_id}`)
      assert.strictEqual(stored.length, new Set(stored).size, "an update stored twice")
      assert.deepStrictEqual(new Set(stored), new Set(all), "storage holds exactly the updates injected")
      const commits = await cluster.query(
        "SELECT bot_id, update_id, app, lease_instance, lease_epoch, at FROM chaos_commits",
        database
      ) as Array<{ bot_id: number; update_id: number; app: string; lease_instance: string; lease_epoch: number; at: number }>
      assert.strictEqual(commits.length, all.length, "each update committed once")
      const foreign = commits.filter((c) => c.app !== c.lease_instance)
      assert.deepStrictEqual(foreign.slice(0, 5), [], "updates committed by an instance not holding the lease")
      for (const tg of tgBots) assert.deepStrictEqual(fake.pendingUpdates(tg.id), [], "every update confirmed to Telegram")

      // The backend: every update at least once; the first arrivals in update_id order per bot.
      const duplicates: Array<Arrival> = []
      const firstArrival = new Map<string, Arrival>()
      for (const arrival of arrivals) {
        const key = `${arrival.bot}:${arrival.update_id}`
        if (firstArrival.has(key)) duplicates.push(firstArrival.get(key)!)
        else firstArrival.set(key, arrival)
      }
      for (const tg of tgBots) {
        const order = [...firstArrival.values()].filter((a) => a.bot === tg.id).map((a) => a.update_id)
        assert.deepStrictEqual(order, [...order].sort((a, b) => a - b), `first arrivals in order for bot ${tg.id}`)
      }
      // Twice only what was in flight on the killed or paused instance when it stopped: at most one batch per bot.
      const inFlightOn = (arrival: Arrival, instance: string, at: number) =>
        arrival.instance === instance && arrival.at <= at + 1000 && arrival.at > at - 10_000
      const unexplained = duplicates.filter((d) => !inFlightOn(d, killed, killedAt) && !inFlightOn(d, paused, pausedAt))
      assert.deepStrictEqual(unexplained.slice(0, 5), [], `${unexplained.length} duplicates not in flight at a fault`)
      for (const tg of tgBots) {
        for (const [instance, at] of [[killed, killedAt], [paused, pausedAt]] as const) {
          const count = duplicates.filter((d) => d.bot === tg.id && inFlightOn(d, instance, at)).length
          assert.isAtMost(count, inFlight, `duplicates of bot ${tg.id} after ${instance} stopped`)
        }
      }

      // Failover within 15 s.
      assert.isAtMost(afterKill.total, 15_000, "the killed instance's bots resumed within 15 s")
      assert.isAtMost(afterPause.total, 15_000, "the paused instance's bots resumed within 15 s")

      // The paused instance, once its lease was lost, polled, delivered and committed nothing for those bots
      // until it held a new lease: until the last status sample that did not show it holding one.
      const calls = fake.calls
      for (const botId of pausedBots) {
        const from = pausedAt + 1000
        const again = samples.findIndex((s) => {
          const lease = s.leases.get(botId)
          return s.start > pausedAt && lease?.instance_id === paused && lease.epoch !== epochAtPause.get(botId)
        })
        const to = again === -1 ? Infinity : samples[again - 1]!.start
        const tg = tgOf.get(botId)!
        const polls = calls.filter((c) =>
          c.botId === tg && c.method === "getUpdates" && instanceOf(c.userAgent) === paused &&
          c.receivedAt >= from && c.receivedAt < to
        )
        assert.deepStrictEqual(polls.map((c) => c.receivedAt - pausedAt), [], `${paused} polled bot ${botId} without its lease`)
        const sent = arrivals.filter((a) => a.bot === tg && a.instance === paused && a.at >= from && a.at < to)
        assert.deepStrictEqual(sent.map((a) => a.update_id), [], `${paused} delivered for bot ${botId} without its lease`)
        const committed = commits.filter((c) =>
          Number(c.bot_id) === botId && c.app === paused && c.at >= from && Number(c.lease_epoch) === epochAtPause.get(botId)
        )
        assert.deepStrictEqual(committed.map((c) => c.update_id), [], `${paused} committed for bot ${botId} on its old lease`)
      }
      const twiceAfter = (instance: string, at: number) => duplicates.filter((d) => inFlightOn(d, instance, at)).length
      console.log(
        `chaos: ${all.length} updates for ${botCount} bots, ${arrivals.length} deliveries (${duplicates.length} twice: ` +
          `${twiceAfter(killed, killedAt)} in flight at SIGKILL, ${twiceAfter(paused, pausedAt)} at SIGSTOP), ` +
          `${samples.length} status samples; SIGCONT after ${fmt(resumedAt - pausedAt)}; ` +
          `drained ${fmt(drainedAt - began)} after the start`
      )
    }, 150_000)
  })
} else {
  describe("chaos: three instances on one PostgreSQL database", () => {
    it.skip(PgCluster.unavailableReason, () => {})
  })
}
