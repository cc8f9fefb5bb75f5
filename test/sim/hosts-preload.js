/**
 * Test-only name resolution, loaded into a process under test with `node -r`: names in the JSON file
 * that TEST_DNS_HOSTS names (`{"c-pd-0.c-pd-peer.ns.svc": "127.21.0.4", ...}`) resolve to
 * those loopback addresses, as cluster DNS would resolve Pod and Service names; every other name goes
 * to the system resolver. The file is read again whenever it changes, so a harness can add Pods as
 * they start. The code under test builds its real URLs (`http://<pod>.<peer>.<ns>:2379`) unchanged.
 */
'use strict';
const dns = require('node:dns');
const fs = require('node:fs');

const file = process.env.TEST_DNS_HOSTS;
if (file) {
  let cache = {};
  let stamp = '';
  const table = () => {
    try {
      const st = fs.statSync(file);
      const now = `${st.ino}:${st.mtimeMs}:${st.size}`;
      if (now !== stamp) {
        cache = JSON.parse(fs.readFileSync(file, 'utf8'));
        stamp = now;
      }
    } catch {
      // Missing or half-written: keep the last table.
    }
    return cache;
  };
  const original = dns.lookup;
  dns.lookup = function lookup(hostname, options, callback) {
    if (typeof options === 'function') {
      callback = options;
      options = {};
    }
    const address = typeof hostname === 'string' ? table()[hostname.toLowerCase().replace(/\.$/, '')] : undefined;
    if (address === undefined) return original.call(this, hostname, options, callback);
    const family = address.includes(':') ? 6 : 4;
    const all = typeof options === 'object' && options !== null && options.all;
    process.nextTick(() => (all ? callback(null, [{ address, family }]) : callback(null, address, family)));
    return {};
  };
  // The promise API has its own lookup (gRPC clients resolve through it): the same table.
  const originalPromise = dns.promises.lookup;
  dns.promises.lookup = function lookup(hostname, options = {}) {
    const address = typeof hostname === 'string' ? table()[hostname.toLowerCase().replace(/\.$/, '')] : undefined;
    if (address === undefined) return originalPromise.call(this, hostname, options);
    const family = address.includes(':') ? 6 : 4;
    const all = typeof options === 'object' && options !== null && options.all;
    return Promise.resolve(all ? [{ address, family }] : { address, family });
  };
}
