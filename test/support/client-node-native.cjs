// Jest's module loader cannot require() an ES module, and its `require('node:module')`
// is a wrapped copy. Node 22's own loader can load @kubernetes/client-node (require(esm)),
// so tests get the real client through the real built-in module.
const { createRequire } = process.getBuiltinModule('node:module');
module.exports = createRequire(__filename)('@kubernetes/client-node');
