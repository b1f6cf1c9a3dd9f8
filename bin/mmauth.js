#!/usr/bin/env node
// Launcher only: all logic lives in dist/cli.js (built by `npm run build`, run by `npm ci`).
import { main } from '../dist/cli.js';

main(process.argv);
