import { MemoryStorage } from "@botrelay/core"
import { StorageSuite } from "@botrelay/testing"

StorageSuite.suite("memory", MemoryStorage.layer)
