#!/usr/bin/env node
import * as StartHeap from "./StartHeap.js"

// before the rest is loaded: loading the modules is most of start-up's allocation
StartHeap.hold()
const Cli = await import("./Cli.js")
Cli.main(process.argv.slice(2))
