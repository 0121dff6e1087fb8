// Sums up one run of the conformance suite's server scenarios against one
// endpoint, from the checks.json files the suite wrote (-o <dir>) and the
// endpoint's expected-failures file. A scenario fails when any of its checks
// is a FAILURE or a WARNING, as the suite's own baseline check counts it.
//
//	node conformance-report.mjs <label> <results-dir> <expected-failures.yml>
//
// It prints one line per scenario and a count line, and exits 1 on an
// unexpected failure, a listed scenario that passed, or a listed scenario
// without a reason comment.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const [label, dir, expectedFile] = process.argv.slice(2);
if (!label || !dir || !expectedFile) {
  console.error("usage: node conformance-report.mjs <label> <results-dir> <expected-failures.yml>");
  process.exit(2);
}

// expected reads the suite's format (server: a list of scenario names)
// with the reason: the comment line right above each entry.
function expected(file) {
  const reasons = new Map();
  let comment = "";
  let inServer = false;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (/^\S/.test(line) && !line.startsWith("#")) {
      inServer = line.startsWith("server:");
      comment = "";
      continue;
    }
    const c = /^\s+#\s*(.*)$/.exec(line);
    if (c) {
      comment = c[1];
      continue;
    }
    const entry = /^\s+-\s+([\w./-]+)\s*$/.exec(line);
    if (entry && inServer) {
      reasons.set(entry[1], comment);
    }
    comment = "";
  }
  return reasons;
}

const reasons = expected(expectedFile);
const scenarios = new Map(); // name -> { failed, why }
for (const sub of readdirSync(dir)) {
  const m = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(sub);
  if (!m) continue;
  const checks = JSON.parse(readFileSync(join(dir, sub, "checks.json"), "utf8"));
  const bad = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
  scenarios.set(m[1], {
    failed: bad.length > 0,
    why: bad.map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? JSON.stringify(c.details ?? {})}`).join("; "),
  });
}

let passed = 0;
let expectedToFail = 0;
const problems = [];
const lines = [];
for (const [name, s] of [...scenarios].sort(([a], [b]) => a.localeCompare(b))) {
  const listed = reasons.has(name);
  if (!s.failed && !listed) {
    passed++;
    lines.push(`  pass      ${name}`);
  } else if (s.failed && listed) {
    expectedToFail++;
    lines.push(`  expected  ${name}: ${reasons.get(name)}`);
  } else if (s.failed) {
    problems.push(`unexpected failure: ${name}: ${s.why}`);
    lines.push(`  FAIL      ${name}: ${s.why}`);
  } else {
    problems.push(`listed in ${expectedFile} but passed: ${name}`);
    lines.push(`  STALE     ${name}: passed, but is listed as expected to fail`);
  }
}
for (const [name, reason] of reasons) {
  if (!scenarios.has(name)) problems.push(`listed in ${expectedFile} but not run: ${name}`);
  if (!reason) problems.push(`listed in ${expectedFile} without a reason comment: ${name}`);
}
if (scenarios.size === 0) problems.push(`no scenario results in ${dir}`);

console.log(lines.join("\n"));
for (const p of problems) console.log(`  problem: ${p}`);
const failed = scenarios.size - passed - expectedToFail;
console.log(`conformance, ${label}: ${passed} passed, ${failed} failed, ${expectedToFail} expected to fail (${scenarios.size} scenarios)`);
process.exit(problems.length > 0 ? 1 : 0);
