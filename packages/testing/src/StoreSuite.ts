import { type Stores, StoreHealth, StoreLock } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { bots } from "./storage/Bots.js"
import { routes } from "./storage/Routes.js"
import { messages } from "./storage/Messages.js"
import { search } from "./storage/Search.js"
import { tags } from "./storage/Tags.js"
import { apiKeys } from "./storage/Keys.js"
import { inbox } from "./storage/Inbox.js"
import { webhookSecrets } from "./storage/WebhookSecrets.js"
import { deliveries } from "./storage/Deliveries.js"
import { routeSends } from "./storage/RouteSends.js"
import { longPollBuffer } from "./storage/Buffer.js"
import { isolation } from "./storage/Isolation.js"
import { settings } from "./storage/Settings.js"
import { events } from "./storage/Events.js"
import { bridges } from "./storage/Bridges.js"
import { runner } from "./storage/Fixtures.js"

export { botInput } from "./storage/Fixtures.js"
import { chats } from "./storage/Chats.js"
import { conversations } from "./storage/Conversations.js"
import { people } from "./storage/People.js"
import { stats } from "./storage/Stats.js"
import { accounts } from "./storage/Accounts.js"
import { sessions } from "./storage/Sessions.js"
import { audit } from "./storage/Audit.js"
import { backlog } from "./storage/Backlog.js"
import { notes } from "./storage/Notes.js"
import { cannedReplies } from "./storage/CannedReplies.js"
import { scopes } from "./storage/Scopes.js"
import { deliveryTruth } from "./storage/DeliveryTruth.js"

/**
 * The store conformance suite: every driver must pass it. `layer` provides every store and must give
 * fresh, empty stores each time it is built; every test builds it once. The tests live in
 * `./storage/`, one file per store area, each asking for the stores it needs.
 */
export const suite = (name: string, layer: Layer.Layer<Stores.Stores, unknown>): void => {
  const run = runner(layer)

  describe(`${name} storage`, () => {
    bots(run)
    routes(run)
    messages(run)
    search(run)
    tags(run)
    apiKeys(run)
    inbox(run)
    webhookSecrets(run)
    deliveries(run)
    routeSends(run)
    longPollBuffer(run)
    isolation(run)
    settings(run)
    events(run)
    bridges(run)
    chats(run)
    conversations(run)
    people(run)
    stats(run)
    accounts(run)
    sessions(run)
    audit(run)
    backlog(run)
    notes(run)
    cannedReplies(run)
    scopes(run)
    deliveryTruth(run)

    run(StoreHealth.StoreHealth)("ping succeeds", (health) => health.ping)
    run(StoreLock.StoreLock)("exclusive runs the effect and gives its result or its failure", (lock) =>
      Effect.gen(function*() {
        assert.strictEqual(yield* lock.exclusive("test", Effect.succeed(7)), 7)
        assert.deepStrictEqual(yield* Effect.flip(lock.exclusive("test", Effect.fail("no"))), "no")
        assert.strictEqual(yield* lock.exclusive("test", Effect.succeed(8)), 8)
      }))
  })
}
