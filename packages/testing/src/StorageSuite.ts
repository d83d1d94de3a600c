import type { Storage } from "@botrelay/core"
import { describe } from "@effect/vitest"
import type { Layer } from "effect"
import { bots } from "./storage/Bots.js"
import { routes } from "./storage/Routes.js"
import { messages } from "./storage/Messages.js"
import { tags } from "./storage/Tags.js"
import { apiKeys } from "./storage/Keys.js"
import { inbox } from "./storage/Inbox.js"
import { webhookSecrets } from "./storage/WebhookSecrets.js"
import { deliveries } from "./storage/Deliveries.js"
import { routeSends } from "./storage/RouteSends.js"
import { longPollBuffer } from "./storage/Buffer.js"
import { isolation } from "./storage/Isolation.js"
import { settings } from "./storage/Settings.js"
import { runner } from "./storage/Fixtures.js"

/**
 * The storage conformance suite: every `StorageService` driver must pass it. `layer` must give a
 * fresh, empty storage each time it is built; every test builds it once. The tests live in
 * `./storage/`, one file per area.
 */
export const suite = (name: string, layer: Layer.Layer<Storage.Storage, unknown>): void => {
  const test = runner(layer)

  describe(`${name} storage`, () => {
    bots(test)
    routes(test)
    messages(test)
    tags(test)
    apiKeys(test)
    inbox(test)
    webhookSecrets(test)
    deliveries(test)
    routeSends(test)
    longPollBuffer(test)
    isolation(test)
    settings(test)

    test("ping succeeds", (storage) => storage.ping)
  })
}
