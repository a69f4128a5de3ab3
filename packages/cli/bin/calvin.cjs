#!/usr/bin/env node
// The `calvin` command: the bundle is built by `npm run build` (scripts/bundle.mjs).
require('../out/calvin.cjs');
