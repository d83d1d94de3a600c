import { MemoryStorage } from "@botrelay/core"
import * as StorageSuite from "@botrelay/testing/StorageSuite"

StorageSuite.suite("memory", MemoryStorage.layer)
