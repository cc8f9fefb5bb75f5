#!/usr/bin/env node
// The CLI ships as one bundled file (scripts/build/bundle.mjs): loading a single module is what keeps a cold
// render within a small multiple of a bare `node` start. From Node 22.1, V8 also keeps the bundle's
// compiled code on disk (under the temporary directory, or NODE_COMPILE_CACHE), so a start after the
// first skips compiling it; NODE_DISABLE_COMPILE_CACHE=1 turns that off. Where nothing can be written
// it is only slower.
require('node:module').enableCompileCache?.();
require('../lib/tidb-gitops.js').run();
