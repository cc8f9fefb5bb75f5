#!/usr/bin/env node
// The CLI ships as one bundled file (scripts/bundle.mjs): loading a single module is what keeps a cold
// render within a small multiple of a bare `node` start.
require('../lib/tidb-gitops.js').run();
