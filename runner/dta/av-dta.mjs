#!/usr/bin/env node
// av-dta: the package's bin. The adapters are TypeScript; tsx (a dependency) loads them.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./cli.ts');
process.exitCode = await main(process.argv.slice(2));
