#!/usr/bin/env node
// The CLI is compiled to dist/ by `npm install` (the prepare script).
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv);
