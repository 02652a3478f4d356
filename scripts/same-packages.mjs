#!/usr/bin/env node
// Exits 0 when two package-lock.json files install the same packages on this machine: the same
// versions and contents (integrity), but for optional bindings of other platforms, which one npm
// writes and another leaves out, and the fields npm versions write differently (`resolved`).
// scripts/bench.sh shares node_modules between two builds when they do.
import { readFileSync } from 'node:fs';
import process from 'node:process';

const installed = (path) => {
  const { packages } = JSON.parse(readFileSync(path, 'utf8'));
  const kept = {};
  for (const [name, entry] of Object.entries(packages)) {
    const elsewhere =
      entry.optional &&
      ((entry.os && !entry.os.includes(process.platform)) ||
        (entry.cpu && !entry.cpu.includes(process.arch)));
    if (!elsewhere) kept[name] = [entry.version, entry.integrity];
  }
  return JSON.stringify(kept);
};

const [a, b] = process.argv.slice(2);
process.exit(installed(a) === installed(b) ? 0 : 1);
