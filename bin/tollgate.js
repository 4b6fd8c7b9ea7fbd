#!/usr/bin/env node
// The package's `bin`: runs the compiled CLI (npm ci builds it through the `prepare` script).
import '../dist/src/main.js';
