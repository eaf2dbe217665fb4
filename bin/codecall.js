#!/usr/bin/env node
// The CLI is compiled to dist/ by `npm install` (the prepare script).
// SIGINT is held before the rest loads: one that comes that early ends the process saying so (exit 130).
import { holdSigint } from '../dist/cli/sigint.js';

holdSigint();
const { main } = await import('../dist/cli/main.js');
process.exitCode = await main(process.argv);
